/** `hookgate prune`: counts, then deletes, finished work past its window; pending work stays. */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { runHookgate } from '../helpers/gateway-process.js';
import { post } from '../helpers/http-client.js';
import { startTestGateway } from '../helpers/in-process-gateway.js';
import { baseConfig, HOOK_TOKEN } from '../helpers/temp-config.js';

describe('hookgate prune', () => {
  const stops: Array<() => Promise<void>> = [];
  after(async () => {
    for (const s of stops) await s();
  });

  it('counts with --dry-run, then deletes consumed events past the window and keeps pending ones', async () => {
    const gw = await startTestGateway(
      baseConfig({
        agents: { list: [{ id: 'main', default: true }], defaults: { heartbeat: { every: 0 } } },
        store: { driver: 'sqlite', path: 'state/hookgate.db', retention: { events: '1ms', runs: '1ms' } },
      }),
    );
    stops.push(() => gw.stop());
    const auth = { headers: { authorization: `Bearer ${HOOK_TOKEN}` } };
    assert.equal((await post(gw.port, '/hooks/wake', { text: 'consumed soon', mode: 'now' }, auth)).status, 200);
    for (let i = 0; i < 200 && (await gw.gateway.store.listPendingEvents('agent:main:main')).length > 0; i++)
      await sleep(20);
    assert.equal(
      (await post(gw.port, '/hooks/wake', { text: 'waits for the next heartbeat', mode: 'next-heartbeat' }, auth))
        .status,
      200,
    );
    await gw.gateway.close();
    await sleep(5);

    const dry = await runHookgate(['prune', '--dry-run', '--config', gw.temp.path]);
    assert.equal(dry.code, 0, dry.stderr);
    assert.match(dry.stdout, /^Would delete: 1 consumed events, 0 finished runs/);
    const real = await runHookgate(['prune', '--config', gw.temp.path]);
    assert.equal(real.code, 0, real.stderr);
    assert.match(real.stdout, /^Deleted: 1 consumed events/);
    const events = await runHookgate(['events', '--json', '--config', gw.temp.path]);
    const texts = (JSON.parse(events.stdout) as Array<{ text: string }>).map((e) => e.text);
    assert.deepEqual(texts, ['waits for the next heartbeat']);
  });
});
