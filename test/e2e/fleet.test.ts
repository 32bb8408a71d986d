/**
 * A fleet: three gateways (child processes) on one PostgreSQL schema, 1,000 agent runs (half on
 * the echo model, half on a slow fake model) and 5,000 wakes spread over them, one replica
 * SIGKILLed mid-way. Every acknowledged wake is stored once; every acknowledged run reaches one
 * terminal state with one summary; no reply reaches the chat service twice, except for parts in
 * flight on the killed replica (the documented send → record window); the auth lockout holds
 * across replicas.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { StoreSchema } from '../../src/config/index.js';
import { createStore } from '../../src/store/index.js';
import { createFakeOpenAi } from '../fakes/fake-openai.js';
import { createFakeTelegram } from '../fakes/fake-telegram.js';
import { freePort, spawnGateway, type GatewayProcess } from '../helpers/gateway-process.js';
import { dropSchema, POSTGRES_URL, postgresUnavailable, uniqueSchema } from '../helpers/store-fixture.js';

const TOKEN = 'fleet-test-hook-token-0123456789';
const RUNS = 1000;
const WAKES = 5000;
const REPLICAS = 3;
const MAX_FAILURES = 10;

async function post(
  port: number,
  path: string,
  body: unknown,
  token = TOKEN,
): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(`http://127.0.0.1:${port}/hooks/${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json().catch(() => ({}))) as Record<string, unknown> };
}

/** Runs `jobs` with at most `width` in flight. */
async function pool<T>(jobs: Array<() => Promise<T>>, width: number): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < jobs.length) await jobs[next++]!();
    }),
  );
}

describe('a fleet of three replicas on one PostgreSQL database', async () => {
  const why = await postgresUnavailable();
  if (why !== null) {
    process.stderr.write(`SKIPPED: fleet e2e: ${why}\n`);
    it('runs against PostgreSQL', { skip: why }, () => undefined);
    return;
  }
  const cleanups: Array<() => Promise<unknown> | unknown> = [];
  after(async () => {
    for (const c of cleanups.reverse()) await c();
  });

  it('acknowledged work survives a SIGKILLed replica, once', { timeout: 600_000 }, async (t) => {
    const model = await createFakeOpenAi({
      apiKey: 'sk',
      reply: (b) => {
        const last = String(b.messages?.at(-1)?.content ?? '');
        if (last.startsWith('Heartbeat.')) return 'HEARTBEAT_OK';
        return `slow reply [${/\[(r\d+)\]/.exec(last)?.[1] ?? '?'}]`;
      },
      delayMs: 40,
    });
    const telegram = await createFakeTelegram({ botToken: '123:fleet', chatIds: ['42'] });
    cleanups.push(
      () => model.close(),
      () => telegram.close(),
    );
    const schema = uniqueSchema('hg_fleet');
    cleanups.push(() => dropSchema(schema));
    const dir = mkdtempSync(join(tmpdir(), 'hookgate-fleet-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));

    const replicas: GatewayProcess[] = [];
    const ports: number[] = [];
    for (let i = 0; i < REPLICAS; i++) {
      const port = await freePort();
      const path = join(dir, `r${i}.json`);
      writeFileSync(
        path,
        JSON.stringify({
          gateway: { port, logLevel: 'error' },
          hooks: {
            enabled: true,
            token: TOKEN,
            authRateLimit: { maxFailures: MAX_FAILURES, windowSeconds: 600, lockoutSeconds: 600 },
          },
          models: { providers: { fake: { api: 'openai', baseUrl: `${model.url}/v1`, apiKey: 'sk' } } },
          agents: {
            defaults: { model: 'fake/m', maxConcurrentRuns: 8, heartbeat: { every: 0 } },
            list: [{ id: 'main' }],
          },
          channels: { telegram: { botToken: '123:fleet', baseUrl: telegram.url, defaultTo: '42' } },
          store: { driver: 'postgres', url: POSTGRES_URL, schema, leaseSeconds: 3 },
        }),
      );
      ports.push(port);
    }
    // Started together: they race to migrate the fresh schema.
    replicas.push(
      ...(await Promise.all(ports.map((port, i) => spawnGateway(['--config', join(dir, `r${i}.json`)], port)))),
    );
    cleanups.push(() => Promise.all(replicas.map((r) => r.kill())));

    const ackedWakes: string[] = [];
    const ackedRuns = new Map<string, string>();
    let sent = 0;
    const victim = REPLICAS - 1;
    let killed = false;
    const jobs: Array<() => Promise<void>> = [];
    const total = WAKES + RUNS;
    for (let n = 0; n < total; n++) {
      jobs.push(async () => {
        const i = sent++;
        if (!killed && i >= total / 2) {
          killed = true;
          await replicas[victim]!.kill();
        }
        try {
          if (i % 6 === 5) {
            const r = Math.floor(i / 6);
            const port = ports[r % REPLICAS]!;
            const tag = `r${r}`;
            const res = await post(port, 'agent', {
              message: `task [${tag}]`,
              name: tag,
              model: r % 2 === 0 ? 'echo/echo' : 'fake/m',
              channel: 'telegram',
              to: '42',
              wakeMode: 'next-heartbeat',
            });
            if (res.status === 202) ackedRuns.set(String(res.json.runId), tag);
          } else {
            const port = ports[i % REPLICAS]!;
            const res = await post(port, 'wake', { text: `wake ${i}`, mode: i % 50 === 0 ? 'now' : 'next-heartbeat' });
            if (res.status === 200) ackedWakes.push(String(res.json.eventId));
          }
        } catch {
          // The killed replica refuses connections: not acknowledged, not counted.
        }
      });
    }
    await pool(jobs, 24);
    t.diagnostic(
      `acknowledged ${ackedWakes.length} wakes and ${ackedRuns.size} runs; replica ${victim} was SIGKILLed mid-way`,
    );
    assert.ok(ackedWakes.length > WAKES * 0.6 && ackedRuns.size > RUNS * 0.6, 'most requests were acknowledged');

    // The lockout is counted across replicas: failures spread over the two live ones add up.
    for (let k = 0; k < MAX_FAILURES; k++) {
      const res = await post(ports[k % 2]!, 'wake', { text: 'x' }, 'wrong-token');
      assert.equal(res.status, 401, `failure ${k + 1} is a 401`);
    }
    await new Promise((r) => setTimeout(r, 300));
    for (const port of ports.slice(0, 2)) {
      assert.equal((await post(port, 'wake', { text: 'x' })).status, 429, 'locked out on every replica');
    }

    const store = await createStore(StoreSchema.parse({ driver: 'postgres', url: POSTGRES_URL, schema, poolSize: 2 }), {
      mode: 'read',
    });
    cleanups.push(() => store.close());
    const deadline = Date.now() + 120_000;
    let runs = await store.listRuns({ limit: 1_000_000 });
    while (Date.now() < deadline && runs.some((r) => r.state === 'queued' || r.state === 'running')) {
      await new Promise((r) => setTimeout(r, 250));
      runs = await store.listRuns({ limit: 1_000_000 });
    }
    const byId = new Map(runs.map((r) => [r.id, r]));
    for (const [id] of ackedRuns) {
      const r = byId.get(id);
      assert.ok(r, `acknowledged run ${id} is stored`);
      assert.ok(r.state === 'succeeded' || r.state === 'failed', `run ${id} ended (${r.state})`);
    }
    const events = await store.listSystemEvents({ limit: 10_000_000 });
    const eventIds = new Set(events.map((e) => e.id));
    assert.equal(eventIds.size, events.length);
    for (const id of ackedWakes) assert.ok(eventIds.has(id), `acknowledged wake ${id} is stored`);
    const summaries = new Map<string, number>();
    for (const e of events) {
      const m = /^Hook (r\d+)[ :(]/.exec(e.text);
      if (m) summaries.set(m[1]!, (summaries.get(m[1]!) ?? 0) + 1);
    }
    for (const [, tag] of ackedRuns) assert.equal(summaries.get(tag), 1, `one summary for ${tag}`);

    // Deliveries: wait for them to settle, then count replies per run on the chat service.
    const settle = Date.now() + 60_000;
    while (Date.now() < settle && (await store.listDeliveries({ state: 'pending', limit: 1 })).length > 0) {
      await new Promise((r) => setTimeout(r, 250));
    }
    const perRun = new Map<string, number>();
    for (const m of telegram.messages) {
      const tag = /\[(r\d+)\]/.exec(m.text)?.[1];
      if (tag !== undefined) perRun.set(tag, (perRun.get(tag) ?? 0) + 1);
    }
    const twice = [...perRun].filter(([, n]) => n > 1);
    t.diagnostic(
      `${telegram.messages.length} messages delivered; ${twice.length} replies sent twice (in flight on the killed replica)`,
    );
    // Only what the killed replica had in flight at the chat service can repeat: at most its 8 senders.
    assert.ok(twice.length <= 8, `replies sent twice: ${JSON.stringify(twice)}`);
    const succeeded = [...ackedRuns.keys()]
      .filter((id) => byId.get(id)?.state === 'succeeded')
      .map((id) => ackedRuns.get(id)!);
    for (const tag of succeeded) assert.ok((perRun.get(tag) ?? 0) >= 1, `the reply of ${tag} was delivered`);
    for (const r of replicas.slice(0, 2)) assert.equal(await r.stop(), 0);
  });
});
