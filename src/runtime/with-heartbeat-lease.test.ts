import { it, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import { createLog } from '../common/log.js';
import { signalDependants } from '../../test/helpers/signal-dependants.js';
import { createStoreFixture, describeEachDriver, type StoreFixture } from '../../test/helpers/store-fixture.js';
import { withHeartbeatLease } from './with-heartbeat-lease.js';

/** Waits (in real time, briefly) for what a database round trip makes true. */
async function eventually(cond: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !cond(); i++) await new Promise((r) => setTimeout(r, 5));
  assert.ok(cond(), 'condition never became true');
}

describeEachDriver('withHeartbeatLease', (driver) => {
  let f: StoreFixture;
  const log = createLog({ level: 'silent' });
  const opts = (owner: string) => ({ agentId: 'main', owner, leaseMs: 300, shutdown: new AbortController().signal });
  beforeEach(async () => {
    f = await createStoreFixture(driver);
  });
  afterEach(() => f.dispose());

  it('runs the turn under the lease and releases it after', async () => {
    const result = await withHeartbeatLease({ store: f.store, clock: f.clock, log }, opts('a'), async (lease) => {
      assert.equal(typeof lease.claimId, 'string');
      assert.equal(
        await f.store.claimHeartbeat({ agentId: 'main', owner: 'b', leaseMs: 300 }),
        null,
        'held while the turn runs',
      );
      return 'done';
    });
    assert.equal(result, 'done');
    assert.ok(await f.store.claimHeartbeat({ agentId: 'main', owner: 'b', leaseMs: 300 }), 'released after');
  });

  it('leaves nothing on the process-long shutdown signal after its turns', async () => {
    const shutdown = new AbortController();
    for (let i = 0; i < 5; i++) {
      await withHeartbeatLease(
        { store: f.store, clock: f.clock, log },
        { ...opts('a'), shutdown: shutdown.signal },
        async (lease) => {
          assert.equal(lease.signal.aborted, false);
        },
      );
    }
    assert.equal(getEventListeners(shutdown.signal, 'abort').length, 0);
    // Node's AbortSignal.any bookkeeping, where this Node exposes it: one entry per turn made that way.
    const kept = signalDependants(shutdown.signal);
    if (kept !== undefined) assert.equal(kept, 0);
  });

  it('does not run the turn while another process holds the lease', async () => {
    await f.store.claimHeartbeat({ agentId: 'main', owner: 'other', leaseMs: 10_000 });
    let ran = false;
    const result = await withHeartbeatLease({ store: f.store, clock: f.clock, log }, opts('a'), async () => {
      ran = true;
    });
    assert.equal(result, undefined);
    assert.equal(ran, false);
  });

  it('renews the lease while the turn runs, and aborts the turn once the lease is lost', async () => {
    let claimId = '';
    let signal: AbortSignal | undefined;
    const turn = withHeartbeatLease({ store: f.store, clock: f.clock, log }, opts('a'), (lease) => {
      claimId = lease.claimId;
      signal = lease.signal;
      return new Promise<void>((resolve) => lease.signal.addEventListener('abort', () => resolve(), { once: true }));
    });
    await eventually(() => signal !== undefined);
    for (let i = 0; i < 10; i++) {
      await f.clock.advance(100);
      // Each renewal is a round trip to the database: let it land before time moves on.
      await eventually(() => f.clock.sleepers() > 0);
    }
    assert.equal(signal?.aborted, false, 'renewed every third of the lease, so never lost');
    assert.equal(await f.store.claimHeartbeat({ agentId: 'main', owner: 'b', leaseMs: 300 }), null);
    // A peer takes the agent over (as after this process stalled past its lease).
    await f.store.releaseHeartbeat({ agentId: 'main', claimId });
    assert.ok(await f.store.claimHeartbeat({ agentId: 'main', owner: 'b', leaseMs: 10_000 }));
    await f.clock.advance(100);
    await eventually(() => signal?.aborted === true);
    await turn;
    assert.equal(signal?.aborted, true, 'the turn was told its lease is gone');
    assert.equal(
      await f.store.claimHeartbeat({ agentId: 'main', owner: 'c', leaseMs: 300 }),
      null,
      "the peer's lease was not released by the loser",
    );
  });
});
