/**
 * A graceful stop sends nothing twice: a gateway child process under delivery load (agent runs on
 * the echo model, each reply delivered to a fake Telegram that answers slowly, so sends are in
 * flight at every stop) is stopped with SIGTERM and started again, ten times. Every acknowledged
 * run's reply reaches the chat service exactly once.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Agent } from 'node:http';
import { createFakeTelegram } from '../fakes/fake-telegram.js';
import { freePort, spawnGateway } from '../helpers/gateway-process.js';
import { post } from '../helpers/http-client.js';
import { baseConfig, createTempConfig } from '../helpers/temp-config.js';

const RESTARTS = 10;
const CLIENTS = 2;
/** Load before each SIGTERM, and the pause each client takes between two runs. */
const LOAD_MS = 800;
const PAUSE_MS = 15;
/** How slowly the chat service answers each message: sends are in flight whenever a stop comes. */
const SEND_DELAY_MS = 60;

describe('graceful restarts under delivery load', () => {
  const cleanups: Array<() => Promise<unknown> | unknown> = [];
  after(async () => {
    for (const c of cleanups.reverse()) await c();
  });

  it(`delivers each reply once over ${RESTARTS} SIGTERM restarts`, { timeout: 300_000 }, async () => {
    const telegram = await createFakeTelegram({ botToken: '123:graceful', chatIds: ['42'], delayMs: SEND_DELAY_MS });
    cleanups.push(() => telegram.close());
    const port = await freePort();
    const config = createTempConfig(
      baseConfig({
        gateway: { bind: '127.0.0.1', port, logLevel: 'warn' },
        agents: {
          defaults: { model: 'echo/echo', maxConcurrentRuns: 8, heartbeat: { every: 0 } },
          list: [{ id: 'main', default: true }],
        },
        channels: { telegram: { botToken: '123:graceful', baseUrl: telegram.url, defaultTo: '42' } },
      }),
    );
    cleanups.push(() => config.cleanup());

    /** message → runId of every run acknowledged 202. */
    const acked = new Map<string, string>();
    const unexpected: string[] = [];
    for (let round = 0; round < RESTARTS; round++) {
      const gw = await spawnGateway(['--config', config.path], port);
      cleanups.push(() => gw.kill());
      const agent = new Agent({ keepAlive: true, maxSockets: CLIENTS });
      let stopping = false;
      const client = async (c: number): Promise<void> => {
        for (let n = 0; ; n++) {
          const message = `round ${round} client ${c} run ${n}`;
          try {
            const res = await post(
              port,
              '/hooks/agent',
              { message, channel: 'telegram', to: '42', wakeMode: 'next-heartbeat' },
              { agent, timeoutMs: 20_000 },
            );
            if (res.status === 202) acked.set(message, (res.json as { runId: string }).runId);
            else if (!stopping) unexpected.push(`${message}: ${res.status} ${res.text}`);
          } catch (error) {
            // Refused or reset once the gateway stops listening: the round is over for this client.
            if (!stopping) unexpected.push(`${message}: ${(error as Error).message}`);
            return;
          }
          if (stopping) return;
          await new Promise((r) => setTimeout(r, PAUSE_MS));
        }
      };
      const load = Promise.all(Array.from({ length: CLIENTS }, (_, c) => client(c)));
      await new Promise((r) => setTimeout(r, LOAD_MS));
      stopping = true;
      const code = await gw.stop(60_000);
      await load;
      agent.destroy();
      assert.equal(code, 0, `round ${round}: the gateway exits 0 on SIGTERM\n${gw.output().stderr}`);
    }
    assert.deepEqual(unexpected, [], 'every run sent while the gateway listened was acknowledged');

    // The last start sends what the stops left pending.
    const gw = await spawnGateway(['--config', config.path], port);
    cleanups.push(() => gw.kill());
    const reached = (): Map<string, number> => {
      const counts = new Map<string, number>();
      for (const m of telegram.messages) {
        const message = /It said: (round \d+ client \d+ run \d+)/.exec(m.text)?.[1];
        if (message !== undefined) counts.set(message, (counts.get(message) ?? 0) + 1);
      }
      return counts;
    };
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline && [...acked.keys()].some((m) => !reached().has(m)))
      await new Promise((r) => setTimeout(r, 100));
    await gw.stop(60_000);
    const counts = reached();
    const missing = [...acked.keys()].filter((m) => !counts.has(m));
    const twice = [...counts].filter(([, n]) => n > 1).map(([m, n]) => `${m} (${n} times)`);
    assert.ok(acked.size >= RESTARTS * 10, `load ran (${acked.size} runs acknowledged)`);
    assert.deepEqual(missing.slice(0, 10), [], `${missing.length} of ${acked.size} acknowledged replies never sent`);
    assert.deepEqual(twice.slice(0, 10), [], `${twice.length} of ${acked.size} replies sent more than once`);
  });
});
