import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import Database from 'better-sqlite3';
import type { FakeServer } from '../fakes/create-fake-server.js';
import { createFakeOpenAi } from '../fakes/fake-openai.js';
import { freePort, spawnGateway, type GatewayProcess } from '../helpers/gateway-process.js';

const TOKEN = 'runtime-crash-hook-token';
const RUNS = 24;

describe('runtime crash: SIGKILL with runs in flight', () => {
  const cleanups: Array<() => unknown> = [];
  after(async () => {
    for (const c of cleanups.reverse()) await c();
  });

  it('brings every accepted run to exactly one terminal state with exactly one summary', async () => {
    // A model slow enough that the kill lands while runs are in flight.
    let answered = 0;
    const fake: FakeServer = await createFakeOpenAi({ apiKey: 'sk', reply: () => `ok ${++answered}`, delayMs: 150 });
    cleanups.push(() => fake.close());
    const dir = mkdtempSync(join(tmpdir(), 'hookgate-runtime-crash-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const port = await freePort();
    const configPath = join(dir, 'hookgate.json');
    writeFileSync(
      configPath,
      JSON.stringify({
        gateway: { port, logLevel: 'error' },
        hooks: { enabled: true, token: TOKEN },
        models: { providers: { fake: { api: 'openai', baseUrl: `${fake.url}/v1`, apiKey: 'sk' } } },
        agents: {
          defaults: { model: 'fake/m', maxConcurrentRuns: 4, heartbeat: { every: 0 } },
          list: [{ id: 'main' }],
        },
      }),
    );

    let gw: GatewayProcess = await spawnGateway(['--config', configPath], port);
    cleanups.push(() => gw.kill());
    const accepted: string[] = [];
    await Promise.all(
      Array.from({ length: RUNS }, async (_, i) => {
        const res = await fetch(`http://127.0.0.1:${port}/hooks/agent`, {
          method: 'POST',
          headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
          body: JSON.stringify({ message: `task ${i}`, name: `r${i}`, wakeMode: 'next-heartbeat', deliver: false }),
        });
        if (res.status === 202) accepted.push(String(((await res.json()) as { runId: string }).runId));
      }),
    );
    assert.equal(accepted.length, RUNS);
    // Let some runs finish and others start, then kill the process mid-flight.
    const deadline = Date.now() + 10_000;
    while (answered < 3 && Date.now() < deadline) await sleep(10);
    await gw.kill();
    const dbPath = join(dir, 'state', 'hookgate.db');
    const mid = new Database(dbPath, { readonly: true });
    const states = mid.prepare('SELECT state, count(*) AS n FROM runs GROUP BY state').all() as Array<{
      state: string;
      n: number;
    }>;
    mid.close();
    assert.ok(
      states.some((s) => s.state === 'running' || s.state === 'queued'),
      `work was left in flight: ${JSON.stringify(states)}`,
    );

    gw = await spawnGateway(['--config', configPath], port);
    const finish = Date.now() + 20_000;
    for (;;) {
      const db = new Database(dbPath, { readonly: true });
      const open = (
        db.prepare("SELECT count(*) AS n FROM runs WHERE state IN ('queued', 'running')").get() as { n: number }
      ).n;
      db.close();
      if (open === 0) break;
      assert.ok(Date.now() < finish, `${open} runs never finished`);
      await sleep(50);
    }
    await gw.stop();

    const db = new Database(dbPath, { readonly: true });
    try {
      for (const [i, id] of accepted.entries()) {
        const run = db.prepare('SELECT state, name FROM runs WHERE id = ?').get(id) as
          | { state: string; name: string }
          | undefined;
        assert.ok(run !== undefined, `run ${id} is in the store`);
        assert.equal(run.state, 'succeeded', `run ${id}`);
        const summaries = (
          db.prepare('SELECT count(*) AS n FROM system_events WHERE text LIKE ?').get(`Hook ${run.name}: %`) as {
            n: number;
          }
        ).n;
        const failures = (
          db.prepare('SELECT count(*) AS n FROM system_events WHERE text LIKE ?').get(`Hook ${run.name} (%`) as {
            n: number;
          }
        ).n;
        assert.equal(summaries + failures, 1, `exactly one summary for r${i}`);
      }
      const total = (db.prepare('SELECT count(*) AS n FROM runs').get() as { n: number }).n;
      assert.equal(total, RUNS);
    } finally {
      db.close();
    }
  });
});
