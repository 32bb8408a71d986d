import { it, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import { createStoreFixture, describeEachDriver, type StoreFixture } from '../../test/helpers/store-fixture.js';
import { completion, newRun } from '../../test/helpers/store-records.js';
import { waitForRun } from './wait-for-run.js';

describeEachDriver('waitForRun', (driver) => {
  let f: StoreFixture;
  beforeEach(async () => {
    f = await createStoreFixture(driver);
  });
  afterEach(() => f.dispose());

  const finish = async (o: Parameters<typeof completion>[1] = {}) => {
    const [c] = await f.store.claimRuns({ owner: 'w', limit: 1, leaseMs: 60_000 });
    await f.store.completeRun(completion(c!, o));
    return c!;
  };

  it('answers once the run failed, with its category and no text', async () => {
    const r = newRun('s');
    await f.store.enqueueRun(r);
    const waiting = waitForRun({ store: f.store, clock: f.clock }, r.id, 10_000);
    await finish({
      state: 'failed',
      reply: null,
      error: 'Incorrect API key provided: sk-…',
      delivery: null,
      transcript: [],
    });
    await f.clock.advance(500);
    assert.deepEqual(await waiting, {
      runId: r.id,
      status: 'failed',
      delivered: false,
      error: 'failed',
      reply: null,
      held: null,
    });
  });

  it('waits for the reply to be delivered, then says so', async () => {
    const r = newRun('s');
    await f.store.enqueueRun(r);
    const waiting = waitForRun({ store: f.store, clock: f.clock }, r.id, 10_000);
    await finish();
    await f.clock.advance(500);
    const [d] = await f.store.claimDueDeliveries({ owner: 'w', limit: 1, leaseMs: 1000, now: f.clock.now() });
    await f.store.recordDeliveryAttempt({
      claimId: d!.claimId,
      deliveryId: d!.id,
      attempt: 1,
      at: 1,
      status: 200,
      error: null,
      outcome: 'sent',
      resolvedChannel: 'telegram',
      resolvedTo: '42',
      partsSent: 1,
      nextAttemptAt: null,
      lastRoute: null,
    });
    await f.clock.advance(500);
    assert.deepEqual(await waiting, {
      runId: r.id,
      status: 'succeeded',
      delivered: true,
      error: null,
      reply: 'done',
      held: null,
    });
  });

  it('gives up at the deadline with the run still under way, leaving it alone', async () => {
    const r = newRun('s');
    await f.store.enqueueRun(r);
    const waiting = waitForRun({ store: f.store, clock: f.clock }, r.id, 2000);
    await f.clock.advance(2500);
    assert.deepEqual(await waiting, {
      runId: r.id,
      status: 'queued',
      delivered: false,
      error: 'wait_timeout',
      reply: null,
      held: null,
    });
    assert.equal((await f.store.getRun(r.id))?.state, 'queued');
  });

  it('says why a run still queued at the deadline is held back by its budget', async () => {
    const r = newRun('s');
    await f.store.enqueueRun(r);
    // The agent's budget has no room: the claim leaves the run queued, held with the reason.
    assert.deepEqual(
      await f.store.claimRuns({
        owner: 'w',
        limit: 1,
        leaseMs: 60_000,
        budgets: { agents: { main: { runsPerHour: 0 } }, hooks: {} },
      }),
      [],
    );
    const waiting = waitForRun({ store: f.store, clock: f.clock }, r.id, 2000);
    await f.clock.advance(2500);
    const result = await waiting;
    assert.equal(result.status, 'queued');
    assert.equal(result.error, 'wait_timeout');
    assert.match(result.held ?? '', /agent "main": 0 runs started in the last hour \(runsPerHour 0\)/);
  });

  it('stops waiting, without the clock moving, once its signal aborts (the client left)', async () => {
    const r = newRun('s');
    await f.store.enqueueRun(r);
    const gone = new AbortController();
    let settled = false;
    const waiting = waitForRun({ store: f.store, clock: f.clock }, r.id, 60_000, gone.signal).finally(
      () => (settled = true),
    );
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(settled, false, 'still waiting for the run');
    gone.abort();
    const result = await waiting;
    assert.equal(result.error, 'wait_timeout');
    assert.equal(result.status, 'queued');
    assert.equal(getEventListeners(gone.signal, 'abort').length, 0);
  });

  it('does not wait for a delivery the run never asked for', async () => {
    const r = newRun('s', { deliver: false });
    await f.store.enqueueRun(r);
    await finish({ delivery: null });
    const result = await waitForRun({ store: f.store, clock: f.clock }, r.id, 10_000);
    assert.deepEqual(result, {
      runId: r.id,
      status: 'succeeded',
      delivered: false,
      error: null,
      reply: 'done',
      held: null,
    });
  });
});
