import { it, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { createStoreFixture, describeEachDriver, type StoreFixture } from '../../../test/helpers/store-fixture.js';
import { completion, newDelivery, newEvent, newRun } from '../../../test/helpers/store-records.js';
import { createStore } from '../create-store.js';
import type { Store } from '../store.js';
import type { CommitObservation } from '../store-stats.js';

const claim = (store: Store, limit = 1) => store.claimRuns({ owner: 'test', limit, leaseMs: 30_000 });

describeEachDriver('store contract: stats, size and the write probe', (driver) => {
  let f: StoreFixture;
  let store: Store;
  beforeEach(async () => {
    f = await createStoreFixture(driver);
    store = f.store;
  });
  afterEach(() => f.dispose());

  it('reports empty queues as zeros with no oldest item', async () => {
    assert.deepEqual(await store.readQueueStats(), {
      queuedRuns: 0,
      runningRuns: 0,
      heldRuns: 0,
      pendingEvents: 0,
      pendingDeliveries: 0,
      oldestQueuedRunAt: null,
      oldestPendingEventAt: null,
      oldestPendingDeliveryAt: null,
    });
  });

  it('counts queued and running runs, pending events and deliveries, with the oldest of each', async () => {
    await store.enqueueRun(newRun('hook:a', { createdAt: 100 }));
    await store.enqueueRun(newRun('hook:b', { createdAt: 200 }));
    await store.enqueueRun(newRun('hook:c', { createdAt: 300 }));
    await store.addSystemEvent(newEvent('first', { createdAt: 50 }));
    await store.addSystemEvent(newEvent('second', { createdAt: 60 }));
    await store.addDelivery(newDelivery({ createdAt: 70 }));
    const [running] = await claim(store);
    assert.ok(running);
    const stats = await store.readQueueStats();
    assert.deepEqual(stats, {
      queuedRuns: 2,
      runningRuns: 1,
      heldRuns: 0,
      pendingEvents: 2,
      pendingDeliveries: 1,
      oldestQueuedRunAt: 200,
      oldestPendingEventAt: 50,
      oldestPendingDeliveryAt: 70,
    });
    // Another connection (the CLI beside a gateway) sees the same.
    const reader = await f.open('read');
    assert.deepEqual(await reader.readQueueStats(), stats);
  });

  it('counts every run by state, zero for states with none', async () => {
    assert.deepEqual(await store.countRuns(), { queued: 0, running: 0, succeeded: 0, failed: 0, timed_out: 0 });
    for (const key of ['hook:1', 'hook:2', 'hook:3', 'hook:4']) await store.enqueueRun(newRun(key));
    const [a, b, c] = await claim(store, 3);
    assert.ok(a && b && c);
    assert.equal(await store.completeRun(completion(a)), true);
    assert.equal(
      await store.completeRun(
        completion(b, { state: 'failed', reply: null, error: 'boom', transcript: [], delivery: null }),
      ),
      true,
    );
    assert.deepEqual(await store.countRuns(), { queued: 1, running: 1, succeeded: 1, failed: 1, timed_out: 0 });
    // A completed run's delivery is now pending.
    assert.equal((await store.readQueueStats()).pendingDeliveries, 1);
  });

  it('reports its size on disk as the sum of its parts', async () => {
    await store.addSystemEvent(newEvent('x'.repeat(10_000)));
    const size = await store.readStoreSize();
    assert.ok(size.totalBytes > 0, `size ${size.totalBytes}`);
    assert.equal(
      size.totalBytes,
      size.parts.reduce((sum, p) => sum + p.bytes, 0),
    );
    const names = size.parts.map((p) => p.name);
    if (driver === 'sqlite') assert.deepEqual(names, ['database', 'wal']);
    else assert.ok(names.includes('runs') && names.includes('system_events'), names.join(','));
  });

  it('probes a write on a writable store, and refuses it on a read-only one', async () => {
    await store.probeWrite();
    await store.probeWrite();
    const reader = await f.open('read');
    await assert.rejects(reader.probeWrite());
  });

  it('tells its observer about each group commit: writes, time and outcome', async () => {
    await store.close();
    const seen: CommitObservation[] = [];
    const observed = await createStore(f.config, {
      mode: 'serve',
      clock: f.clock,
      observer: { onCommit: (c) => seen.push(c) },
    });
    try {
      // Written in one turn: one batch.
      await Promise.all([
        observed.addSystemEvent(newEvent('a')),
        observed.addSystemEvent(newEvent('b')),
        observed.enqueueRun(newRun('hook:o')),
      ]);
      assert.ok(seen.length >= 1);
      assert.equal(
        seen.reduce((n, c) => n + c.writes, 0),
        3,
      );
      for (const c of seen) {
        assert.equal(c.ok, true);
        assert.ok(c.seconds >= 0 && Number.isFinite(c.seconds));
      }
    } finally {
      await observed.close();
    }
  });
});
