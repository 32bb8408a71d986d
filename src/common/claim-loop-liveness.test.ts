import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createManualClock } from '../../test/helpers/manual-clock.js';
import { createClaimLoop } from './create-claim-loop.js';
import { createLog } from './log.js';

/** A loop whose claim the test can make hang. */
function harness() {
  const clock = createManualClock();
  let hang = false;
  const loop = createClaimLoop<{ id: string }>({
    name: 'items',
    claim: () => (hang ? new Promise<never>(() => undefined) : Promise.resolve([])),
    execute: async () => undefined,
    renew: async () => [],
    concurrency: 1,
    pollMs: 1000,
    renewEveryMs: 1000,
    stopGraceMs: 0,
    clock,
    log: createLog({ level: 'silent' }),
  });
  return {
    loop,
    clock,
    hangClaims: () => {
      hang = true;
    },
  };
}

describe('claim loop liveness', () => {
  it('is not alive before start or after stop', async () => {
    const h = harness();
    assert.equal(h.loop.isAlive(), false);
    h.loop.start();
    assert.equal(h.loop.isAlive(), true);
    await h.loop.stop();
    assert.equal(h.loop.isAlive(), false);
  });

  it('stays alive while its polls keep finishing passes', async () => {
    const h = harness();
    h.loop.start();
    for (let i = 0; i < 30; i++) await h.clock.advance(1000);
    assert.equal(h.loop.isAlive(), true);
    await h.loop.stop();
  });

  it('counts as stalled once a claim has hung past the bound', async () => {
    const h = harness();
    h.loop.start();
    await h.clock.advance(1000);
    h.hangClaims();
    await h.clock.advance(1000);
    assert.equal(h.loop.isAlive(), true, 'a claim in flight for a moment is normal');
    for (let i = 0; i < 10; i++) await h.clock.advance(1000);
    assert.equal(h.loop.isAlive(), false);
  });
});
