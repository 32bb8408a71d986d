/**
 * The runtime over each store driver: agent runs reach one terminal state with one summary each,
 * `now` wakes get heartbeat turns that consume every event once. On PostgreSQL, two gateways
 * (replicas) share one schema: runs posted to either are executed once, and heartbeat turns of the
 * one agent never consume an event twice.
 */
import { it, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { createLog } from '../../src/common/log.js';
import { safeParseConfig } from '../../src/config/index.js';
import { startGateway, type Gateway } from '../../src/main.js';
import type { Store } from '../../src/store/index.js';
import { createFakeOpenAi } from '../fakes/fake-openai.js';
import type { FakeServer } from '../fakes/create-fake-server.js';
import { createStoreConfig, describeEachDriver } from '../helpers/store-fixture.js';
import type { StoreConfig } from '../../src/config/index.js';

const TOKEN = 'runtime-drivers-token-0123456789';

describeEachDriver('runtime over the store', (driver) => {
  let fake: FakeServer;
  let store: { config: StoreConfig; cleanup(): Promise<void> };
  const gateways: Gateway[] = [];

  beforeEach(async () => {
    fake = await createFakeOpenAi({
      apiKey: 'sk',
      reply: (b) => (String(b.messages?.at(-1)?.content ?? '').startsWith('Heartbeat.') ? 'HEARTBEAT_OK' : 'done'),
      delayMs: 5,
    });
    store = createStoreConfig(driver);
  });
  afterEach(async () => {
    for (const g of gateways.splice(0)) await g.close();
    await fake.close();
    await store.cleanup();
  });

  const start = async (): Promise<Gateway> => {
    const parsed = safeParseConfig(
      {
        gateway: { logLevel: 'silent' },
        hooks: { enabled: true, token: TOKEN },
        models: { providers: { fake: { api: 'openai', baseUrl: `${fake.url}/v1`, apiKey: 'sk' } } },
        agents: {
          defaults: { model: 'fake/m', maxConcurrentRuns: 4, heartbeat: { every: 0 } },
          list: [{ id: 'main' }],
        },
        store: store.config,
      },
      { path: `${process.cwd()}/hookgate.json`, env: {} },
    );
    assert.ok(parsed.ok, JSON.stringify(parsed));
    const g = await startGateway(parsed.loaded, {
      port: 0,
      log: createLog({ level: 'silent' }),
      delivery: { deliver: () => undefined },
      runtime: { coalesceMs: 20, pollMs: 200 },
    });
    gateways.push(g);
    return g;
  };
  const post = async (g: Gateway, path: string, body: unknown): Promise<Record<string, unknown>> => {
    const res = await fetch(`http://127.0.0.1:${g.port}/hooks/${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    assert.ok(res.status === 200 || res.status === 202, `status ${res.status}`);
    return (await res.json()) as Record<string, unknown>;
  };
  const until = async (what: string, done: () => Promise<boolean>): Promise<void> => {
    for (let i = 0; i < 1500; i++) {
      if (await done()) return;
      await sleep(20);
    }
    assert.fail(`timed out waiting until ${what}`);
  };
  const checkOnce = async (s: Store, runIds: string[], eventIds: string[]): Promise<void> => {
    const runs = await s.listRuns({ limit: 100_000 });
    for (const id of runIds) assert.equal(runs.find((r) => r.id === id)?.state, 'succeeded', id);
    const events = await s.listSystemEvents({ limit: 100_000 });
    const summaries = events.filter((e) => e.text.startsWith('Hook '));
    assert.equal(summaries.length, runIds.length, 'one summary per run');
    for (const id of eventIds)
      assert.notEqual(events.find((e) => e.id === id)?.consumedAt, null, `event ${id} consumed`);
    // Each turn's user prompt lists the events it consumed; a twin turn would list one again.
    const prompts = (await s.readTranscript('agent:main:main', { limit: 100_000 })).filter((t) => t.role === 'user');
    for (const id of eventIds) {
      const text = events.find((e) => e.id === id)!.text;
      assert.equal(prompts.filter((p) => p.content.includes(text)).length, 1, `"${text}" went into one turn`);
    }
  };

  it('runs every queued run once, with one summary, and gives now wakes a heartbeat turn', async () => {
    const g = await start();
    const runIds: string[] = [];
    for (let i = 0; i < 30; i++)
      runIds.push(
        String((await post(g, 'agent', { message: `task ${i}`, wakeMode: 'next-heartbeat', deliver: false })).runId),
      );
    await until(
      'every run finished',
      async () => (await g.store.listRuns({ state: 'succeeded', limit: 1000 })).length === 30,
    );
    const eventIds: string[] = [];
    for (let i = 0; i < 5; i++)
      eventIds.push(String((await post(g, 'wake', { text: `wake number ${i}`, mode: 'now' })).eventId));
    await until(
      'the wakes were consumed',
      async () => (await g.store.listPendingEvents('agent:main:main')).length === 0,
    );
    await checkOnce(g.store, runIds, eventIds);
    assert.equal(
      fake.requests.filter((r) => !JSON.stringify(r.body).includes('Heartbeat.')).length,
      30,
      'one model call per run',
    );
  });

  it('two replicas on one database execute each run once and consume each event once', {
    skip: driver === 'sqlite' ? 'a SQLite database has one gateway (the refusal is its own test)' : false,
  }, async () => {
    const a = await start();
    const b = await start();
    const runIds: string[] = [];
    const eventIds: string[] = [];
    for (let i = 0; i < 60; i++) {
      const g = i % 2 === 0 ? a : b;
      runIds.push(
        String((await post(g, 'agent', { message: `task ${i}`, wakeMode: 'next-heartbeat', deliver: false })).runId),
      );
      if (i % 6 === 0)
        eventIds.push(
          String((await post(i % 4 === 0 ? b : a, 'wake', { text: `fleet wake ${i}`, mode: 'now' })).eventId),
        );
    }
    await until(
      'every run finished',
      async () => (await a.store.listRuns({ state: 'succeeded', limit: 1000 })).length === 60,
    );
    // Summaries of runs that ended after the last `now` wake wait for the periodic heartbeat; the wakes do not.
    await until('the wakes were consumed', async () => {
      const pending = new Set((await a.store.listPendingEvents('agent:main:main')).map((e) => e.id));
      return eventIds.every((id) => !pending.has(id));
    });
    await checkOnce(a.store, runIds, eventIds);
    assert.equal(
      fake.requests.filter((r) => !JSON.stringify(r.body).includes('Heartbeat.')).length,
      60,
      'one model call per run',
    );
    const attempts = new Set((await a.store.listRuns({ limit: 1000 })).map((r) => r.attempts));
    assert.deepEqual([...attempts], [1], 'no run was claimed twice');
  });
});
