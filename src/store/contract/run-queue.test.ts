import { it, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { createStoreFixture, describeEachDriver, type StoreFixture } from '../../../test/helpers/store-fixture.js';
import { MAIN, completion, newEvent, newRun } from '../../../test/helpers/store-records.js';
import type { Store } from '../store.js';

describeEachDriver('store contract: run queue', (driver) => {
  let f: StoreFixture;
  let store: Store;
  const claim = (limit = 10, leaseMs = 1000, owner = 'w1') => store.claimRuns({ owner, limit, leaseMs });
  beforeEach(async () => {
    f = await createStoreFixture(driver);
    store = f.store;
  });
  afterEach(() => f.dispose());

  it('claims oldest first, one run per session key at a time, with a lease on the store clock', async () => {
    const a1 = newRun('a');
    const a2 = newRun('a');
    const b1 = newRun('b');
    for (const r of [a1, a2, b1]) await store.enqueueRun(r);
    const first = await claim();
    assert.deepEqual(
      first.map((r) => r.id),
      [a1.id, b1.id],
    );
    assert.equal(first[0]!.state, 'running');
    assert.equal(first[0]!.attempts, 1);
    assert.equal(first[0]!.leaseOwner, 'w1');
    assert.equal(first[0]!.leaseUntil, f.clock.now() + 1000);
    assert.notEqual(first[0]!.claimId, first[1]!.claimId);
    const stored = await store.getRun(a1.id);
    assert.equal(stored?.state, 'running');
    assert.equal(stored?.startedAt, f.clock.now());
    assert.deepEqual(await claim(), [], 'a2 waits for a1');
    assert.equal(await store.completeRun(completion(first[0]!)), true);
    assert.deepEqual(
      (await claim()).map((r) => r.id),
      [a2.id],
    );
  });

  it('finds the runs it may claim past a long line of runs waiting behind a busy session, with few sessions or many', async () => {
    const small = await createStoreFixture(driver, { claimScan: 2 });
    try {
      const s = small.store;
      const busy = [newRun('busy'), newRun('busy'), newRun('busy'), newRun('busy')];
      for (const r of busy) await s.enqueueRun(r);
      assert.deepEqual(
        (await s.claimRuns({ owner: 'w', limit: 1, leaseMs: 1000 })).map((r) => r.id),
        [busy[0]!.id],
      );
      const b = newRun('b');
      await s.enqueueRun(b);
      assert.deepEqual(
        (await s.claimRuns({ owner: 'w', limit: 3, leaseMs: 1000 })).map((r) => r.id),
        [b.id],
        'two sessions: their oldest runs',
      );
      const more = [newRun('c'), newRun('d'), newRun('e')];
      for (const r of more) await s.enqueueRun(r);
      assert.deepEqual(
        (await s.claimRuns({ owner: 'w', limit: 2, leaseMs: 1000 })).map((r) => r.id),
        [more[0]!.id, more[1]!.id],
        'five sessions: everything, oldest first',
      );
      assert.deepEqual(
        (await s.claimRuns({ owner: 'w', limit: 5, leaseMs: 1000 })).map((r) => r.id),
        [more[2]!.id],
      );
    } finally {
      await small.dispose();
    }
  });

  it('claims the runs past the first few ready ones when those are queued behind a busy session, oldest first', async () => {
    const busy = Array.from({ length: 40 }, () => newRun('busy'));
    for (const r of busy) await store.enqueueRun(r);
    assert.deepEqual(
      (await claim(1)).map((r) => r.id),
      [busy[0]!.id],
    );
    const others = [newRun('x'), newRun('y'), newRun('z')];
    for (const r of others) await store.enqueueRun(r);
    assert.deepEqual(
      (await claim(2)).map((r) => r.id),
      [others[0]!.id, others[1]!.id],
    );
    assert.deepEqual(
      (await claim(2)).map((r) => r.id),
      [others[2]!.id],
    );
    assert.deepEqual(await claim(2), []);
  });

  it('claims at most limit runs', async () => {
    for (const k of ['a', 'b', 'c']) await store.enqueueRun(newRun(k));
    assert.equal((await claim(2)).length, 2);
    assert.equal((await claim(2)).length, 1);
  });

  it('finishes a run once, with transcript, summary and delivery in the same commit', async () => {
    await store.enqueueRun(newRun('s'));
    const [claimed] = await claim(1);
    const c = completion(claimed!);
    assert.equal(await store.completeRun(c), true);
    assert.equal(await store.completeRun(c), false, 'a second finish is refused');
    const got = await store.getRun(claimed!.id);
    assert.equal(got?.state, 'succeeded');
    assert.equal(got?.reply, 'done');
    assert.equal(got?.modelUsed, 'echo/echo');
    assert.equal(got?.finishedAt, 10);
    assert.equal(got?.leaseOwner, null);
    assert.equal(got?.leaseUntil, null);
    assert.deepEqual(
      (await store.readTranscript('s')).map((t) => t.role),
      ['user', 'assistant'],
    );
    assert.deepEqual(
      (await store.listPendingEvents(MAIN)).map((e) => e.text),
      ['Hook agent: done'],
    );
    const deliveries = await store.listDeliveries();
    assert.deepEqual(
      deliveries.map((d) => [d.state, d.runId]),
      [['pending', claimed!.id]],
    );
  });

  it('records a failed run with its error and no delivery', async () => {
    await store.enqueueRun(newRun('s'));
    const [c] = await claim(1);
    assert.equal(
      await store.completeRun(
        completion(c!, { state: 'failed', reply: null, error: 'boom', transcript: [], delivery: null }),
      ),
      true,
    );
    const got = await store.getRun(c!.id);
    assert.deepEqual([got?.state, got?.error, got?.reply], ['failed', 'boom', null]);
    assert.deepEqual(await store.listDeliveries(), []);
  });

  it('refuses a completion, renewal or release from a stale claim', async () => {
    await store.enqueueRun(newRun('s'));
    const [stale] = await claim(1, 10);
    await f.clock.advance(11);
    assert.deepEqual((await store.recoverExpiredRuns({ owner: 'w2', maxAttempts: 3, leaseMs: 1000 })).requeued, [
      stale!.id,
    ]);
    const [fresh] = await claim(1, 1000, 'w2');
    assert.equal(fresh!.attempts, 2);
    assert.deepEqual(await store.renewRuns([stale!], 5000), []);
    assert.equal(await store.releaseRun(stale!), false);
    assert.equal(await store.completeRun(completion(stale!)), false);
    assert.equal(await store.completeRun(completion(fresh!)), true);
    assert.equal((await store.listPendingEvents(MAIN)).length, 1, 'one summary only');
  });

  it('renews only current claims, from the store clock', async () => {
    await store.enqueueRun(newRun('s'));
    const [c] = await claim(1, 10);
    await f.clock.advance(5);
    assert.deepEqual(await store.renewRuns([c!], 100), [c!.id]);
    assert.equal((await store.getRun(c!.id))?.leaseUntil, f.clock.now() + 100);
    assert.deepEqual(await store.renewRuns([{ ...c!, claimId: 'forged' }], 100), []);
  });

  it('hands a run back without counting the attempt', async () => {
    await store.enqueueRun(newRun('s'));
    const [c] = await claim(1);
    assert.equal(await store.releaseRun(c!), true);
    const got = await store.getRun(c!.id);
    assert.deepEqual([got?.state, got?.attempts, got?.leaseOwner], ['queued', 0, null]);
    assert.equal((await claim(1))[0]?.attempts, 1);
  });

  it('requeues expired leases, then claims them for the sweeper once maxAttempts is reached', async () => {
    const r = newRun('s');
    await store.enqueueRun(r);
    await claim(1, 10);
    await f.clock.advance(5);
    assert.deepEqual(
      await store.recoverExpiredRuns({ owner: 'sweeper', maxAttempts: 2, leaseMs: 1000 }),
      { requeued: [], abandoned: [] },
      'lease still valid',
    );
    await f.clock.advance(10);
    assert.deepEqual((await store.recoverExpiredRuns({ owner: 'sweeper', maxAttempts: 2, leaseMs: 1000 })).requeued, [
      r.id,
    ]);
    await claim(1, 10);
    await f.clock.advance(20);
    const swept = await store.recoverExpiredRuns({ owner: 'sweeper', maxAttempts: 2, leaseMs: 1000 });
    assert.deepEqual(swept.requeued, []);
    assert.deepEqual(
      swept.abandoned.map((x) => [x.id, x.state, x.attempts, x.leaseOwner]),
      [[r.id, 'running', 2, 'sweeper']],
    );
    assert.deepEqual(
      await store.recoverExpiredRuns({ owner: 'other', maxAttempts: 2, leaseMs: 1000 }),
      { requeued: [], abandoned: [] },
      'held by the sweeper now',
    );
    const done = completion(swept.abandoned[0]!, {
      state: 'failed',
      reply: null,
      error: 'interrupted',
      transcript: [],
      delivery: null,
      summary: newEvent('Hook agent (failed): interrupted'),
    });
    assert.equal(await store.completeRun(done), true);
    const got = await store.getRun(r.id);
    assert.deepEqual([got?.state, got?.error], ['failed', 'interrupted']);
    assert.deepEqual(
      (await store.listPendingEvents(MAIN)).map((e) => e.text),
      ['Hook agent (failed): interrupted'],
    );
  });

  it('treats leases left by a process that is gone as expired when a gateway opens a store it alone serves', {
    skip: driver === 'postgres' ? "a shared store's leases may be live replicas'; they expire on the clock" : false,
  }, async () => {
    await store.enqueueRun(newRun('s'));
    await claim(1, 60_000);
    await store.close();
    const again = await f.open('serve');
    assert.equal((await again.recoverExpiredRuns({ owner: 'w', maxAttempts: 3, leaseMs: 1000 })).requeued.length, 1);
  });
});
