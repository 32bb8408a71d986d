import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createLog } from '../common/log.js';
import { RetentionSchema } from '../config/index.js';
import { createManualClock } from '../../test/helpers/manual-clock.js';
import { createPruner } from './create-pruner.js';
import type { RetentionStore } from './store.js';
import type { PruneCounts } from './maintenance-types.js';

const counts = (events: number): PruneCounts => ({
  events,
  runs: 0,
  deliveries: 0,
  transcript: 0,
  requests: 0,
  eventLog: 0,
  idempotencyKeys: 0,
  sessions: 0,
});

/** A store with `backlog` prunable events, handing them out batch by batch and noting each batch's size. */
function backlogStore(backlog: number): RetentionStore & { batches: number[] } {
  let left = backlog;
  const batches: number[] = [];
  return {
    batches,
    async prune(_cutoffs, limit) {
      batches.push(limit);
      const n = Math.min(left, limit);
      left -= n;
      return counts(n);
    },
    async countPrunable() {
      return counts(left);
    },
  };
}

/** A store with a full batch of events always due, whose batches last until the test ends each (`held`, oldest first). */
function heldStore(): RetentionStore & { held: Array<() => void>; inFlight: number; most: number } {
  const store = {
    held: [] as Array<() => void>,
    inFlight: 0,
    most: 0,
    prune(_cutoffs: unknown, limit: number): Promise<PruneCounts> {
      store.inFlight++;
      store.most = Math.max(store.most, store.inFlight);
      return new Promise((resolve) =>
        store.held.push(() => {
          store.inFlight--;
          resolve(counts(limit));
        }),
      );
    },
    async countPrunable() {
      return counts(0);
    },
  };
  return store;
}

describe('createPruner', () => {
  const retention = RetentionSchema.parse({});
  const log = createLog({ level: 'silent' });

  it('works a backlog off in small batches with a pause between them in the background', async () => {
    const clock = createManualClock();
    const store = backlogStore(250);
    const pruner = createPruner({ store, retention, clock, log, backgroundBatchSize: 100, pauseMs: 10 });
    pruner.start();
    await clock.advance(0);
    assert.deepEqual(store.batches, [100], 'one batch, then a pause');
    await clock.advance(9);
    assert.equal(store.batches.length, 1, 'still pausing');
    await clock.advance(1);
    assert.deepEqual(store.batches, [100, 100]);
    await clock.advance(10);
    assert.deepEqual(store.batches, [100, 100, 100], 'the last, short batch ends the pass');
    await clock.advance(10);
    assert.equal(store.batches.length, 3);
    await pruner.stop();
  });

  it('prunes everything at once, without pausing, when asked to (the prune command)', async () => {
    const clock = createManualClock();
    const store = backlogStore(1200);
    const pruner = createPruner({ store, retention, clock, log, batchSize: 500 });
    assert.deepEqual(await pruner.pruneAll(), counts(1200));
    assert.deepEqual(store.batches, [500, 500, 500]);
  });

  it('shows its observer every batch and how each background pass ended', async () => {
    const clock = createManualClock();
    const seen: Array<number | boolean> = [];
    const observer = { pruned: (c: PruneCounts) => seen.push(c.events), passEnded: (ok: boolean) => seen.push(ok) };
    const store = backlogStore(150);
    const pruner = createPruner({
      store,
      retention,
      clock,
      log,
      backgroundBatchSize: 100,
      pauseMs: 10,
      everyMs: 1000,
      observer,
    });
    pruner.start();
    await clock.advance(0);
    await clock.advance(10);
    assert.deepEqual(seen, [100, 50, true]);
    store.prune = async () => {
      throw new Error('disk I/O error');
    };
    await clock.advance(1000);
    assert.deepEqual(seen, [100, 50, true, false]);
    await pruner.stop();
  });

  it('follows a pass cut short at maxBatches with the next at once, not at the next tick', async () => {
    const clock = createManualClock();
    const store = backlogStore(1000);
    const pruner = createPruner({
      store,
      retention,
      clock,
      log,
      backgroundBatchSize: 100,
      pauseMs: 10,
      maxBatches: 3,
      everyMs: 60_000,
    });
    pruner.start();
    for (let i = 0; i < 12; i++) await clock.advance(10);
    assert.equal(store.batches.length, 11, 'ten full batches and the empty one that ends it, within 120 ms');
    await pruner.stop();
  });

  it('prunes everything on demand, pass after pass', async () => {
    const store = backlogStore(1200);
    const pruner = createPruner({ store, retention, clock: createManualClock(), log, batchSize: 500, maxBatches: 2 });
    assert.deepEqual(await pruner.pruneAll(), counts(1200));
    assert.deepEqual(store.batches, [500, 500, 500]);
  });

  it('stops during a pause without waiting it out', async () => {
    const clock = createManualClock();
    const store = backlogStore(1000);
    const pruner = createPruner({ store, retention, clock, log, backgroundBatchSize: 100, pauseMs: 60_000 });
    pruner.start();
    await clock.advance(0);
    await pruner.stop();
    assert.deepEqual(store.batches, [100]);
  });

  it('never starts a pass beside one that outlasts everyMs', async () => {
    const clock = createManualClock();
    const store = heldStore();
    const pruner = createPruner({ store, retention, clock, log, everyMs: 60_000, pauseMs: 10 });
    pruner.start();
    await clock.advance(0);
    assert.equal(store.inFlight, 1);
    await clock.advance(3 * 60_000);
    assert.equal(store.most, 1, 'one batch at a time while the first one lasts three periods');
    for (let i = 0; i < 3; i++) {
      store.held.shift()!();
      await clock.advance(10);
    }
    assert.equal(store.most, 1, 'and after it');
    const stopping = pruner.stop();
    store.held.shift()!();
    await stopping;
  });

  it('stops only once the batch in flight has ended', async () => {
    const clock = createManualClock();
    const store = heldStore();
    const pruner = createPruner({ store, retention, clock, log, everyMs: 60_000, pauseMs: 10 });
    pruner.start();
    await clock.advance(0);
    await clock.advance(60_000);
    let stopped = false;
    const stopping = pruner.stop().then(() => {
      stopped = true;
    });
    // Every batch but the oldest ends first (there is one only, unless a second pass was started).
    while (store.held.length > 1) {
      store.held.pop()!();
      await clock.advance(0);
    }
    assert.equal(stopped, false, 'a batch is in flight');
    store.held.pop()!();
    await stopping;
    assert.equal(store.inFlight, 0);
    await clock.advance(60_000);
    assert.equal(store.inFlight, 0, 'no batch after stop');
  });
});
