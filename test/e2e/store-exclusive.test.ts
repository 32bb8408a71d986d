/**
 * A SQLite database belongs to one gateway: a second `hookgate serve` on it (the same config
 * started twice, or another config naming the same `store.path`) exits non-zero within seconds,
 * naming the database and the holder's pid, and changes nothing: runs in flight are not run
 * again, replies are not sent twice. CLI listings keep working beside the running gateway.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createFakeOpenAi } from '../fakes/fake-openai.js';
import { createFakeTelegram } from '../fakes/fake-telegram.js';
import { freePort, runHookgate, spawnGateway, type GatewayProcess } from '../helpers/gateway-process.js';

const TOKEN = 'exclusive-test-token-0123456789';
const RUNS = 8;

describe('one gateway per SQLite database', () => {
  const cleanups: Array<() => Promise<unknown> | unknown> = [];
  after(async () => {
    for (const c of cleanups.reverse()) await c();
  });

  it('refuses a second gateway on the same database before it touches anything', async () => {
    // Slow enough that every run is still in flight while the second gateway is tried and the runs are listed.
    const model = await createFakeOpenAi({ apiKey: 'sk', delayMs: 6000 });
    const telegram = await createFakeTelegram({ botToken: '123:abc', chatIds: ['42'] });
    cleanups.push(
      () => model.close(),
      () => telegram.close(),
    );
    const dir = mkdtempSync(join(tmpdir(), 'hookgate-exclusive-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const config = (port: number) =>
      JSON.stringify({
        gateway: { port, logLevel: 'warn' },
        hooks: { enabled: true, token: TOKEN },
        models: { providers: { fake: { api: 'openai', baseUrl: `${model.url}/v1`, apiKey: 'sk' } } },
        agents: {
          defaults: { model: 'fake/m', maxConcurrentRuns: RUNS, heartbeat: { every: 0 } },
          list: [{ id: 'main' }],
        },
        channels: { telegram: { botToken: '123:abc', baseUrl: telegram.url, defaultTo: '42' } },
        store: { driver: 'sqlite', path: join(dir, 'state', 'shared.db') },
      });
    const portA = await freePort();
    const portB = await freePort();
    writeFileSync(join(dir, 'a.json'), config(portA));
    writeFileSync(join(dir, 'b.json'), config(portB));

    const a: GatewayProcess = await spawnGateway(['--config', join(dir, 'a.json')], portA);
    cleanups.push(() => a.kill());
    for (let i = 0; i < RUNS; i++) {
      const res = await fetch(`http://127.0.0.1:${portA}/hooks/agent`, {
        method: 'POST',
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ message: `task ${i}`, channel: 'telegram', to: '42', wakeMode: 'next-heartbeat' }),
      });
      assert.equal(res.status, 202);
    }
    for (let i = 0; i < 200 && model.requests.length < RUNS; i++) await sleep(10);
    assert.equal(model.requests.length, RUNS, 'every run is in flight at the model');

    // Another config on the same database, and the same config again (same port).
    for (const other of [join(dir, 'b.json'), join(dir, 'a.json')]) {
      const started = Date.now();
      const b = await runHookgate(['serve', '--config', other], { timeoutMs: 10_000 });
      assert.equal(b.timedOut, false, 'the second gateway exits by itself');
      assert.ok(Date.now() - started < 8000, 'within a few seconds');
      assert.equal(b.code, 1, b.stderr);
      assert.ok(b.stderr.includes(join(dir, 'state', 'shared.db')), `names the database: ${b.stderr}`);
      assert.ok(b.stderr.includes(`pid ${a.child.pid}`), `names the holder's pid: ${b.stderr}`);
    }

    // Reads beside the running gateway.
    const runs = await runHookgate(['runs', '--config', join(dir, 'b.json')]);
    assert.equal(runs.code, 0, runs.stderr);
    // Run lines only: the listing ends with a count per state, which names every state.
    assert.equal(runs.stdout.split('\n').filter((l) => /^\S+ {2}running /.test(l)).length, RUNS, runs.stdout);

    // Nothing ran twice: each run called the model once and its reply reached Telegram once.
    for (let i = 0; i < 500 && telegram.messages.length < RUNS; i++) await sleep(20);
    await sleep(300);
    assert.equal(model.requests.length, RUNS, 'no run called the model twice');
    assert.equal(telegram.messages.length, RUNS, 'no reply was sent twice');
    await a.stop();
  });
});
