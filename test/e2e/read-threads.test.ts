/**
 * The shipped bundle under a flood: its read thread (`read-worker.js` beside `main.js`) answers the
 * queue depths of `/metrics` and the backlog's digest, and the digest turn consumes the flood.
 */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FakeServer } from '../fakes/create-fake-server.js';
import { createFakeOpenAi } from '../fakes/fake-openai.js';
import { freePort, spawnGateway, type GatewayProcess } from '../helpers/gateway-process.js';
import { writePendingEvents } from '../helpers/write-pending-events.js';

const HOOK = 'read-threads-hook-token';
const GATEWAY = 'read-threads-gateway-token';
/** Past the threshold (10,000) beyond which the depths are read on a thread. */
const FLOOD = 12_000;

describe('the shipped gateway under a flood of pending events', () => {
  const cleanups: Array<() => unknown> = [];
  after(async () => {
    for (const c of cleanups.reverse()) await c();
  });

  it('reads its queue depths and the digest on read threads, and consumes the flood in one turn', async () => {
    const prompts: string[] = [];
    const fake: FakeServer = await createFakeOpenAi({
      apiKey: 'sk',
      reply: (b) => {
        prompts.push(String(b.messages?.at(-1)?.content ?? ''));
        return 'HEARTBEAT_OK';
      },
    });
    cleanups.push(() => fake.close());
    const dir = mkdtempSync(join(tmpdir(), 'hookgate-read-threads-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const port = await freePort();
    const configPath = join(dir, 'hookgate.json');
    writeFileSync(
      configPath,
      JSON.stringify({
        gateway: { port, logLevel: 'error', auth: { token: GATEWAY } },
        hooks: { enabled: true, token: HOOK },
        models: { providers: { fake: { api: 'openai', baseUrl: `${fake.url}/v1`, apiKey: 'sk' } } },
        agents: { defaults: { model: 'fake/m', heartbeat: { every: 0 } }, list: [{ id: 'main' }] },
      }),
    );
    const gw: GatewayProcess = await spawnGateway(['--config', configPath], port);
    cleanups.push(() => gw.kill());

    // The flood, written beside the running gateway as another writer would.
    const source = '{"hook":"ci","external":true,"allowUnsafeExternalContent":false}';
    writePendingEvents(
      join(dir, 'state', 'hookgate.db'),
      Array.from({ length: FLOOD }, (_, i) => ({
        id: `flood-${i}`,
        text: `Build ${i} failed on main`,
        source,
        createdAt: Date.now(),
      })),
    );

    const pendingDepth = async (): Promise<number> => {
      const res = await fetch(`http://127.0.0.1:${port}/metrics`, { headers: { authorization: `Bearer ${GATEWAY}` } });
      assert.equal(res.status, 200);
      const line = (await res.text())
        .split('\n')
        .find((l) => l.startsWith('hookgate_queue_depth{queue="events_pending"}'));
      return Number(line?.split(' ').at(-1));
    };
    assert.equal(await pendingDepth(), FLOOD);

    const wake = await fetch(`http://127.0.0.1:${port}/hooks/wake`, {
      method: 'POST',
      headers: { authorization: `Bearer ${HOOK}`, 'content-type': 'application/json' },
      body: JSON.stringify({ text: 'Door opened', mode: 'now' }),
    });
    assert.equal(wake.status, 200);
    for (let i = 0; i < 300 && prompts.length === 0; i++) await sleep(20);
    assert.equal(prompts.length, 1, 'one model turn');
    assert.match(prompts[0]!, new RegExp(`${FLOOD + 1} system events arrived`));
    // Metrics are cached for 2 s; the flood is consumed by the turn's mark at once.
    let depth = FLOOD;
    for (let i = 0; i < 100 && depth !== 0; i++) {
      await sleep(100);
      depth = await pendingDepth();
    }
    assert.equal(depth, 0);
    assert.equal(await gw.stop(), 0);
    assert.equal(gw.output().stderr.includes('read thread'), false, gw.output().stderr);
  });
});
