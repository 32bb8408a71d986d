/**
 * Pause, resume and drain against a real gateway: requests are accepted and stored while dispatch
 * is held, what the hold covers waits (no model call, no chat message), the hold outlasts a restart,
 * binds a fleet on PostgreSQL, and shows in /readyz, /metrics, `status` and the admin API.
 */
import { after, afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { createLog } from '../../src/common/log.js';
import { readConfig } from '../../src/config/index.js';
import { startGateway, type Gateway } from '../../src/main.js';
import type { RunRecord } from '../../src/store/index.js';
import { createFakeOpenAi } from '../fakes/fake-openai.js';
import { createFakeTelegram, type FakeTelegram } from '../fakes/fake-telegram.js';
import type { FakeServer } from '../fakes/create-fake-server.js';
import { freePort } from '../helpers/gateway-process.js';
import { runCliInProcess, type InProcessCliResult } from '../helpers/run-cli-in-process.js';
import { post, send } from '../helpers/http-client.js';
import { metricValue, parseMetrics } from '../helpers/read-metrics.js';
import { postgresUnavailable, POSTGRES_URL, dropSchema, uniqueSchema } from '../helpers/store-fixture.js';
import { createTempConfig, createTempDir, GATEWAY_TOKEN, HOOK_TOKEN, type ConfigDoc } from '../helpers/temp-config.js';

const BOT_TOKEN = '123456789:AAHfiqksKZ8WmR2zSjiQ7_v4TMAKdiHm9T0';
const ROUTE = { channel: 'telegram', to: '42', wakeMode: 'next-heartbeat' } as const;
/** A run of /hooks/agent whose summary waits for the periodic heartbeat (off here). */
const agentRun = (message: string, o: Record<string, unknown> = { deliver: false }) => ({
  message,
  wakeMode: 'next-heartbeat',
  ...o,
});

interface Harness {
  path: string;
  port: number;
  gateway: Gateway;
  model: FakeServer;
  telegram: FakeTelegram;
  /** Runs the CLI in this process against the harness's config. */
  cli(...args: string[]): Promise<InProcessCliResult>;
  restart(): Promise<void>;
  stop(): Promise<void>;
}

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const modelCalls = (h: Harness): number => h.model.requests.filter((r) => r.path === '/v1/chat/completions').length;

async function until<T>(what: string, probe: () => Promise<T | null | undefined | false>, ms = 8000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== null && v !== undefined && v !== false) return v;
    if (Date.now() > end) assert.fail(`timed out waiting for ${what}`);
    await sleep(25);
  }
}

const finished = (h: Harness, id: string): Promise<RunRecord> =>
  until(`run ${id} to finish`, async () => {
    const r = await h.gateway.store.getRun(id);
    return r !== null && r.state !== 'queued' && r.state !== 'running' ? r : null;
  });

async function startHarness(
  options: { modelDelayMs?: number; store?: ConfigDoc; port?: number; dir?: string } = {},
): Promise<Harness> {
  const model = await createFakeOpenAi({
    apiKey: 'sk-fake',
    reply: (b) => `ok: ${String(b.messages?.at(-1)?.content ?? '').slice(0, 20)}`,
    ...(options.modelDelayMs === undefined ? {} : { delayMs: options.modelDelayMs }),
  });
  const telegram = await createFakeTelegram({ botToken: BOT_TOKEN, chatIds: ['42'] });
  const port = options.port ?? 0;
  const config: ConfigDoc = {
    gateway: { bind: '127.0.0.1', port, auth: { token: GATEWAY_TOKEN }, logLevel: 'silent' },
    hooks: {
      enabled: true,
      token: HOOK_TOKEN,
      mappings: [
        // Summaries wait for the periodic heartbeat (off here): the model is called for runs alone.
        { id: 'github', match: { path: 'github' }, messageTemplate: 'github {{n}}', ...ROUTE },
        { id: 'stripe', match: { path: 'stripe' }, messageTemplate: 'stripe {{n}}', ...ROUTE },
      ],
    },
    models: { providers: { fake: { api: 'openai', baseUrl: `${model.url}/v1`, apiKey: 'sk-fake' } } },
    agents: {
      defaults: { model: 'fake/gpt-test', heartbeat: { every: 0 } },
      list: [{ id: 'main', default: true }, { id: 'ops' }],
    },
    channels: { telegram: { botToken: BOT_TOKEN, baseUrl: telegram.url } },
    store: options.store ?? { driver: 'sqlite', path: 'state/hookgate.db', sync: 'normal' },
  };
  const dir = options.dir ?? createTempDir('hookgate-dispatch-');
  const temp = createTempConfig(config, { dir });
  const open = () =>
    startGateway(readConfig(temp.path, {}), {
      port,
      log: createLog({ level: 'silent' }),
      runtime: { pollMs: 50, coalesceMs: 20 },
      deliveryOptions: { pollMs: 50 },
      readiness: { cacheMs: 0 },
    });
  let gateway = await open();
  let stopped = false;
  const h: Harness = {
    path: temp.path,
    port: gateway.port,
    gateway,
    model,
    telegram,
    cli: (...args) => runCliInProcess(temp.path, args),
    async restart() {
      await gateway.close();
      gateway = await open();
      h.gateway = gateway;
      h.port = gateway.port;
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      await gateway.close();
      await model.close();
      await telegram.close();
      if (options.dir === undefined) rmSync(dir, { recursive: true, force: true });
    },
  };
  cleanups.push(() => h.stop());
  return h;
}

const runIdOf = (r: { json: unknown }): string => (r.json as { runId: string }).runId;

describe('pause and resume', () => {
  it('holds a paused mapping’s runs while its requests are accepted, and runs them once resumed', async () => {
    const h = await startHarness();
    const paused = await h.cli('pause', '--mapping', 'github', '--note', 'rotating the secret');
    assert.equal(paused.code, 0, paused.stderr);
    assert.match(paused.stdout, /Paused mapping "github"/);
    const held = await post(h.port, '/hooks/github', { n: 1 });
    assert.equal(held.status, 202, 'the request is accepted and stored');
    const free = await post(h.port, '/hooks/stripe', { n: 2 });
    assert.equal((await finished(h, runIdOf(free))).state, 'succeeded', 'another mapping runs');
    await sleep(300);
    const run = await h.gateway.store.getRun(runIdOf(held));
    assert.equal(run?.state, 'queued');
    assert.equal(run?.heldReason, 'mapping "github": paused: rotating the secret (paused)');
    assert.equal(modelCalls(h), 1, 'the model was called for the other mapping only');
    const resumed = await h.cli('resume', '--mapping', 'github');
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.match(resumed.stdout, /Resumed mapping "github"/);
    assert.equal((await finished(h, runIdOf(held))).state, 'succeeded');
    await until('both replies delivered', async () => h.telegram.messages.length === 2);
  });

  it('gives a held agent no heartbeat turn, and the turn it was refused once resumed', async () => {
    const h = await startHarness();
    assert.equal((await h.cli('pause', '--agent', 'main')).code, 0);
    const wake = await post(h.port, '/hooks/wake', { text: 'the build broke', mode: 'now' });
    assert.equal(wake.status, 200);
    await sleep(400);
    assert.equal(modelCalls(h), 0, 'no heartbeat turn while held');
    assert.equal((await h.cli('resume', '--agent', 'main')).code, 0);
    await until('the heartbeat turn', async () => modelCalls(h) === 1);
    const pending = await h.gateway.store.listPendingEvents('agent:main:main');
    assert.deepEqual(pending, [], 'the turn consumed the wake');
  });

  it('holds a reply’s delivery under a pause of everything; the run claimed before it finishes', async () => {
    const h = await startHarness({ modelDelayMs: 600 });
    const run = await post(h.port, '/hooks/agent', agentRun('hi', ROUTE));
    await until('the run to start', async () => (await h.gateway.store.getRun(runIdOf(run)))?.state === 'running');
    assert.equal((await h.cli('pause', '--all')).code, 0);
    assert.equal((await finished(h, runIdOf(run))).state, 'succeeded', 'claimed work finishes');
    await sleep(300);
    assert.equal(h.telegram.messages.length, 0, 'no message is sent while held');
    const [d] = await h.gateway.store.listDeliveries();
    assert.equal(d?.state, 'pending');
    assert.equal((await h.cli('resume', '--all')).code, 0);
    await until('the reply delivered', async () => h.telegram.messages.length === 1);
  });

  it('keeps a hold across a restart, and shows it in /readyz, /metrics and status', async () => {
    const h = await startHarness();
    assert.equal((await h.cli('pause', '--all', '--note', 'incident 42')).code, 0);
    await h.restart();
    const queued = await post(h.port, '/hooks/agent', agentRun('after the restart'));
    assert.equal(queued.status, 202);
    await sleep(300);
    const run = await h.gateway.store.getRun(runIdOf(queued));
    assert.equal(run?.state, 'queued');
    assert.equal(run?.heldReason, 'all dispatch paused: incident 42 (paused)');
    const ready = await send(h.port, '/readyz', { method: 'GET', auth: false });
    assert.equal(ready.status, 200, 'a paused gateway takes requests: it is ready');
    assert.deepEqual(ready.json, {
      ok: true,
      dispatch: { held: true, draining: { replica: false, fleet: false }, paused: [{ scope: 'all', key: '*' }] },
    });
    assert.doesNotMatch(ready.text, /incident/, 'the note is not told to anyone without the token');
    const metrics = parseMetrics((await send(h.port, '/metrics', { method: 'GET', auth: GATEWAY_TOKEN })).text);
    assert.equal(metricValue(metrics, 'hookgate_dispatch_holds', { scope: 'all', key: '*', kind: 'pause' }), 1);
    assert.equal(metricValue(metrics, 'hookgate_dispatch_replica_draining'), 0);
    const status = await h.cli('status');
    assert.match(
      status.stdout,
      /Dispatch held \(requests are still accepted\):\n {2}all dispatch {7}paused .*: incident 42/,
    );
    assert.equal((await h.cli('resume', '--all')).code, 0);
    assert.equal((await finished(h, runIdOf(queued))).state, 'succeeded');
    assert.match((await h.cli('status')).stdout, /Dispatch: running \(no hold\)/);
  });

  it('refuses a selection that names no hold, changing nothing', async () => {
    const h = await startHarness();
    for (const args of [['pause'], ['pause', '--all', '--agent', 'main'], ['pause', '--mapping', 'gitlab']]) {
      const r = await h.cli(...args);
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stdout}${r.stderr}`);
    }
    assert.match(
      (await h.cli('pause', '--mapping', 'gitlab')).stderr,
      /no mapping "gitlab" in the config \(mappings: github, stripe\)/,
    );
    assert.deepEqual(await h.gateway.store.listHolds(), []);
    const r = await h.cli('resume', '--agent', 'ops');
    assert.equal(r.code, 0);
    assert.match(r.stdout, /agent "ops" was not held/);
  });
});

describe('drain', () => {
  it('waits for the run in flight, reports when nothing is, and holds new work until resumed', async () => {
    const h = await startHarness({ modelDelayMs: 700 });
    const run = await post(h.port, '/hooks/agent', agentRun('long one'));
    await until('the run to start', async () => (await h.gateway.store.getRun(runIdOf(run)))?.state === 'running');
    const drained = await h.cli('drain', '--timeout', '20s');
    assert.equal(drained.code, 0, drained.stderr);
    assert.match(drained.stdout, /1 run, 0 deliveries, 0 heartbeat turns in flight/);
    assert.match(drained.stdout, /Drained: nothing in flight/);
    assert.equal((await h.gateway.store.getRun(runIdOf(run)))?.state, 'succeeded', 'it finished, not handed back');
    const after = await post(h.port, '/hooks/agent', agentRun('during the deploy'));
    assert.equal(after.status, 202);
    await sleep(300);
    assert.equal((await h.gateway.store.getRun(runIdOf(after)))?.heldReason, 'dispatch drained (draining)');
    // Told by its own poll: the drain was written by another process, whose signals do not reach it.
    const ready = await until('/readyz to tell of the drain', async () => {
      const r = await send(h.port, '/readyz', { method: 'GET', auth: false });
      return (r.json as { dispatch: { held: boolean } }).dispatch.held ? r : null;
    });
    assert.deepEqual((ready.json as { dispatch: unknown }).dispatch, {
      held: true,
      draining: { replica: false, fleet: true },
      paused: [],
    });
    assert.equal((await h.cli('resume', '--all')).code, 0);
    assert.equal((await finished(h, runIdOf(after))).state, 'succeeded');
  });

  it('gives up after its timeout, saying what is still in flight; the hold stays', async () => {
    const h = await startHarness({ modelDelayMs: 3000 });
    const run = await post(h.port, '/hooks/agent', agentRun('slow'));
    await until('the run to start', async () => (await h.gateway.store.getRun(runIdOf(run)))?.state === 'running');
    const r = await h.cli('drain', '--timeout', '300ms');
    assert.equal(r.code, 1);
    assert.match(r.stderr, /not drained within 300ms: 1 run, 0 deliveries, 0 heartbeat turns in flight/);
    assert.deepEqual(
      (await h.gateway.store.listHolds()).map((x) => x.kind),
      ['drain'],
    );
    assert.equal((await h.cli('drain', '--timeout', 'soon')).code, 2, 'a timeout that is no duration');
  });

  it('drains one replica through its admin API until resumed', async () => {
    const port = await freePort();
    const h = await startHarness({ port });
    const drain = await h.cli('drain', '--replica', '--timeout', '5s');
    assert.equal(drain.code, 0, drain.stderr);
    assert.match(drain.stdout, /Drained: nothing in flight on this replica/);
    assert.deepEqual(await h.gateway.store.listHolds(), [], 'the fleet is not held');
    const run = await post(h.port, '/hooks/agent', agentRun('waits'));
    await sleep(300);
    assert.equal((await h.gateway.store.getRun(runIdOf(run)))?.state, 'queued', 'this replica claims nothing');
    const ready = await send(h.port, '/readyz', { method: 'GET', auth: false });
    assert.deepEqual((ready.json as { dispatch: unknown }).dispatch, {
      held: true,
      draining: { replica: true, fleet: false },
      paused: [],
    });
    const resumed = await h.cli('resume', '--replica');
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.equal((await finished(h, runIdOf(run))).state, 'succeeded');
  });
});

describe('dispatch in the admin API', () => {
  const admin = (h: Harness, method: string, path: string) =>
    send(h.port, `/admin/api${path}`, { method, auth: GATEWAY_TOKEN });

  it('pauses, lists and resumes, with the work in flight', async () => {
    const h = await startHarness();
    const paused = await admin(h, 'POST', '/dispatch/pause?agent=ops&note=quota');
    assert.equal(paused.status, 200, paused.text);
    const body = paused.json as {
      holds: Array<{ scope: string; key: string; kind: string; note: string }>;
      replica: { draining: boolean; inFlight: Record<string, number> };
      fleet: { inFlight: Record<string, number> };
    };
    assert.deepEqual(
      body.holds.map((x) => [x.scope, x.key, x.kind, x.note]),
      [['agent', 'ops', 'pause', 'quota']],
    );
    assert.deepEqual(body.replica, { draining: false, inFlight: { runs: 0, heartbeats: 0, deliveries: 0 } });
    assert.deepEqual(body.fleet.inFlight, { runs: 0, deliveries: 0, heartbeats: 0 });
    const resumed = await admin(h, 'POST', '/dispatch/resume?agent=ops');
    assert.equal((resumed.json as { resumed: boolean }).resumed, true);
    assert.deepEqual((resumed.json as { holds: unknown[] }).holds, []);
  });

  it('answers 400 invalid_query for a selection naming no hold', async () => {
    const h = await startHarness();
    for (const q of ['', '?all=1&agent=main', '?mapping=nope', '?all=maybe']) {
      const r = await admin(h, 'POST', `/dispatch/pause${q}`);
      assert.equal(r.status, 400, q);
      assert.equal((r.json as { code: string }).code, 'invalid_query', q);
    }
    assert.deepEqual(await h.gateway.store.listHolds(), []);
  });
});

describe('dispatch holds in a fleet on PostgreSQL', async () => {
  const why = await postgresUnavailable();
  if (why !== null) {
    it('PostgreSQL', { skip: why }, () => undefined);
    return;
  }
  const schema = uniqueSchema('hg_dispatch');
  after(() => dropSchema(schema));

  it('a pause set by one replica holds the other at once, and its resume lets it run', async () => {
    const store = { driver: 'postgres', url: POSTGRES_URL, schema, poolSize: 4 };
    const a = await startHarness({ store });
    const b = await startHarness({ store });
    const paused = await a.cli('pause', '--mapping', 'github');
    assert.equal(paused.code, 0, paused.stderr);
    await until('replica b to hear of the hold', async () => {
      const r = await send(b.port, '/readyz', { method: 'GET', auth: false });
      return (r.json as { dispatch: { held: boolean } }).dispatch.held;
    });
    const held = await post(b.port, '/hooks/github', { n: 7 });
    assert.equal(held.status, 202);
    await sleep(400);
    assert.equal((await b.gateway.store.getRun(runIdOf(held)))?.state, 'queued');
    assert.equal(modelCalls(a) + modelCalls(b), 0, 'neither replica called the model');
    assert.equal((await b.cli('resume', '--mapping', 'github')).code, 0);
    assert.equal((await finished(b, runIdOf(held))).state, 'succeeded');
  });
});
