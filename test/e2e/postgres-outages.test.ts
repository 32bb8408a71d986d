/**
 * A gateway child process on PostgreSQL, reached through a TCP proxy the test owns
 * (`test/helpers/pg-proxy.ts`), under wake, run and delivery load, while its database connections
 * are ended: backends terminated twenty times (as an administrator or a failover would), then the
 * server gone (connections refused) for a few seconds and back. The process never exits, every
 * acknowledged wake and run is stored, every run ends and every reply is delivered, and the
 * gateway hears notifications again. Only the gateway's own backends are touched (found by the
 * proxy's client ports); the PostgreSQL server itself is never restarted, since others use it.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Agent } from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { StoreSchema } from '../../src/config/index.js';
import { createStore, type Store } from '../../src/store/index.js';
import { createFakeTelegram, type FakeTelegram } from '../fakes/fake-telegram.js';
import { freePort, spawnGateway, type GatewayProcess } from '../helpers/gateway-process.js';
import { post } from '../helpers/http-client.js';
import { createPgProxy, type PgProxy } from '../helpers/pg-proxy.js';
import { dropSchema, POSTGRES_URL, postgresUnavailable, uniqueSchema } from '../helpers/store-fixture.js';

const TOKEN = 'outage-test-hook-token-0123456789';
const CLIENTS = 6;
const KILLS = 20;
const KILL_EVERY_MS = 250;

/** What the load got: the acknowledged wakes and runs, and every answer that was neither. */
interface Load {
  wakes: Set<string>;
  /** runId → message. */
  runs: Map<string, string>;
  /** Status → count, for every answer. */
  statuses: Map<number, number>;
  /** Anything but 200, 202 and 503 store_unavailable. */
  unexpected: string[];
}

/** Sends wakes (a few `now`, so heartbeat turns run too) and delivering runs from `CLIENTS` clients until `stop()`. */
function startLoad(port: number, tag: string): { load: Load; stop(): Promise<void> } {
  const load: Load = { wakes: new Set(), runs: new Map(), statuses: new Map(), unexpected: [] };
  const agent = new Agent({ keepAlive: true, maxSockets: CLIENTS });
  let stopping = false;
  const client = async (c: number): Promise<void> => {
    for (let n = 0; !stopping; n++) {
      const wake = n % 2 === 0;
      const text = `${tag} c${c} n${n}`;
      const body = wake
        ? { text, mode: n % 10 === 0 ? 'now' : 'next-heartbeat' }
        : { message: `task [${text}]`, channel: 'telegram', to: '42', wakeMode: 'next-heartbeat' };
      try {
        const res = await post(port, wake ? '/hooks/wake' : '/hooks/agent', body, {
          agent,
          auth: TOKEN,
          timeoutMs: 30_000,
        });
        load.statuses.set(res.status, (load.statuses.get(res.status) ?? 0) + 1);
        const json = res.json as { eventId?: string; runId?: string; code?: string } | undefined;
        if (wake && res.status === 200) load.wakes.add(json!.eventId!);
        else if (!wake && res.status === 202) load.runs.set(json!.runId!, text);
        else if (res.status === 503 && json?.code === 'store_unavailable') await pause(50);
        else load.unexpected.push(`${text}: ${res.status} ${res.text}`);
      } catch (error) {
        load.unexpected.push(`${text}: ${(error as Error).message}`);
        await pause(50);
      }
    }
  };
  const clients = Promise.all(Array.from({ length: CLIENTS }, (_, c) => client(c)));
  return {
    load,
    async stop() {
      stopping = true;
      await clients;
      agent.destroy();
    },
  };
}

const pause = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * The run each message at the chat service replies to, by the text its run was sent with: the echo
 * model's reply to a run quotes its message. A heartbeat reply that quotes a summary among wakes is
 * news of its own, not a second copy of the run's reply.
 */
const replies = (telegram: FakeTelegram): string[] =>
  telegram.messages
    .map((m) => /^task \[([a-z]+ c\d+ n\d+)\]/.exec(m.text.split('It said: ')[1] ?? '')?.[1])
    .filter((t) => t !== undefined);

/**
 * Waits until every acknowledged run has ended and every succeeded one's reply reached the chat
 * service, then checks that every acknowledged wake and run is stored, and no reply was sent twice.
 */
async function assertAllDone(store: Store, telegram: FakeTelegram, load: Load): Promise<void> {
  const delivered = (): Set<string> => new Set(replies(telegram));
  const deadline = Date.now() + 90_000;
  for (;;) {
    const runs = new Map((await store.listRuns({ limit: 1_000_000 })).map((r) => [r.id, r]));
    const sent = delivered();
    const open = [...load.runs].filter(([id, text]) => {
      const run = runs.get(id);
      return run === undefined || run.state === 'queued' || run.state === 'running' || !sent.has(text);
    });
    if (open.length === 0 || Date.now() > deadline) {
      const missing = [...load.runs.keys()].filter((id) => !runs.has(id));
      assert.deepEqual(missing.slice(0, 10), [], `${missing.length} acknowledged runs missing`);
      const notDone = open.map(
        ([id, text]) => `${text}: ${runs.get(id)?.state} (${runs.get(id)?.error}), delivered ${sent.has(text)}`,
      );
      assert.deepEqual(notDone.slice(0, 10), [], `${notDone.length} runs not ended or not delivered in 90 s`);
      break;
    }
    await pause(250);
  }
  // A send whose record the database could not take is recorded once it can, not sent again.
  const times = new Map<string, number>();
  for (const text of replies(telegram)) times.set(text, (times.get(text) ?? 0) + 1);
  const twice = [...times].filter(([, n]) => n > 1).map(([text, n]) => `${text} (${n} times)`);
  assert.deepEqual(twice.slice(0, 10), [], `${twice.length} replies sent more than once`);
  const events = new Set((await store.listSystemEvents({ limit: 10_000_000 })).map((e) => e.id));
  const missing = [...load.wakes].filter((id) => !events.has(id));
  assert.deepEqual(missing.slice(0, 10), [], `${missing.length} of ${load.wakes.size} acknowledged wakes missing`);
}

describe('a gateway on PostgreSQL whose connections are ended under load', async () => {
  const why = await postgresUnavailable();
  if (why !== null) {
    process.stderr.write(`SKIPPED: postgres outages e2e: ${why}\n`);
    it('runs against PostgreSQL', { skip: why }, () => undefined);
    return;
  }
  const cleanups: Array<() => Promise<unknown> | unknown> = [];
  after(async () => {
    for (const c of cleanups.reverse()) await c();
  });

  /** A gateway through a proxy of its own, on a fresh schema, delivering to a fake Telegram. */
  const startGateway = async (): Promise<{
    gw: GatewayProcess;
    proxy: PgProxy;
    store: Store;
    telegram: FakeTelegram;
  }> => {
    const telegram = await createFakeTelegram({ botToken: '123:outage', chatIds: ['42'] });
    cleanups.push(() => telegram.close());
    const proxy = await createPgProxy(POSTGRES_URL);
    cleanups.push(() => proxy.close());
    const schema = uniqueSchema('hg_outage');
    cleanups.push(() => dropSchema(schema));
    const dir = mkdtempSync(join(tmpdir(), 'hookgate-outage-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const port = await freePort();
    const path = join(dir, 'hookgate.json');
    writeFileSync(
      path,
      JSON.stringify({
        gateway: { port, logLevel: 'error' },
        hooks: { enabled: true, token: TOKEN },
        agents: {
          defaults: { model: 'echo/echo', maxConcurrentRuns: 8, heartbeat: { every: 0 } },
          list: [{ id: 'main' }],
        },
        channels: { telegram: { botToken: '123:outage', baseUrl: telegram.url, defaultTo: '42' } },
        store: { driver: 'postgres', url: proxy.url, schema, leaseSeconds: 5, poolSize: 6 },
      }),
    );
    const gw = await spawnGateway(['--config', path], port);
    cleanups.push(() => gw.kill());
    // The test's own reads go to the server directly, never through the proxy it cuts.
    const store = await createStore(StoreSchema.parse({ driver: 'postgres', url: POSTGRES_URL, schema, poolSize: 2 }), {
      mode: 'read',
    });
    cleanups.push(() => store.close());
    return { gw, proxy, store, telegram };
  };

  /** Fails with the gateway's output when it has exited. */
  const assertAlive = (gw: GatewayProcess, when: string): void => {
    assert.equal(
      gw.child.exitCode ?? gw.child.signalCode,
      null,
      `the gateway exited ${when}\n${gw.output().stderr.slice(-4000)}`,
    );
  };

  it(`lives through ${KILLS} backend kills under load, losing nothing acknowledged`, {
    timeout: 300_000,
  }, async (t) => {
    const { gw, proxy, store, telegram } = await startGateway();
    const { load, stop } = startLoad(gw.port, 'kills');
    let ended = 0;
    try {
      await pause(500);
      for (let k = 0; k < KILLS; k++) {
        ended += await proxy.terminateBackends();
        await pause(KILL_EVERY_MS);
        assertAlive(gw, `after kill ${k + 1}`);
      }
      await pause(1000);
    } finally {
      await stop();
    }
    t.diagnostic(
      `${ended} backends ended; ${load.wakes.size} wakes and ${load.runs.size} runs acknowledged; answers ${JSON.stringify([...load.statuses])}`,
    );
    assertAlive(gw, 'under load');
    assert.ok(ended >= KILLS, 'every kill found backends to end');
    assert.ok(load.wakes.size > 100 && load.runs.size > 100, 'the load went on between the kills');
    assert.deepEqual(load.unexpected.slice(0, 10), [], `${load.unexpected.length} answers neither 2xx nor 503`);
    await assertAllDone(store, telegram, load);
    assertAlive(gw, 'after the load');
    assert.doesNotMatch(gw.output().stderr, /fatal error/);
    assert.equal(await gw.stop(), 0);
  });

  it('answers 503 while the server is gone, and serves again once it is back', { timeout: 300_000 }, async (t) => {
    const { gw, proxy, store, telegram } = await startGateway();
    const { load, stop } = startLoad(gw.port, 'outage');
    let during: Map<number, number>;
    try {
      await pause(1000);
      await proxy.cut();
      const before = new Map(load.statuses);
      await pause(3000);
      during = new Map([...load.statuses].map(([s, n]) => [s, n - (before.get(s) ?? 0)]));
      assertAlive(gw, 'while the server was gone');
      await proxy.restore();
      await pause(3000);
    } finally {
      await stop();
    }
    t.diagnostic(`answers while gone ${JSON.stringify([...during])}; in all ${JSON.stringify([...load.statuses])}`);
    assert.ok((during.get(503) ?? 0) > 10, 'requests were answered 503 while the server was gone, not held');
    assert.deepEqual(load.unexpected.slice(0, 10), [], `${load.unexpected.length} answers neither 2xx nor 503`);
    // Work announced after the outage is heard again: the LISTEN connection is back.
    for (let i = 0; i < 50 && !(await proxy.backendQueries()).some((q) => q.startsWith('LISTEN')); i++)
      await pause(200);
    assert.ok(
      (await proxy.backendQueries()).some((q) => q.startsWith('LISTEN')),
      'the gateway listens again',
    );
    const wake = await post(
      gw.port,
      '/hooks/wake',
      { text: 'after the outage', mode: 'next-heartbeat' },
      { auth: TOKEN },
    );
    assert.equal(wake.status, 200, wake.text);
    await assertAllDone(store, telegram, load);
    assertAlive(gw, 'after the outage');
    assert.equal(await gw.stop(), 0);
  });
});
