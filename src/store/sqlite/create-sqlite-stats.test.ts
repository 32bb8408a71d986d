import { describe, it, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { createSqliteFixture, type SqliteFixture } from '../../../test/helpers/sqlite-fixture.js';
import { newEvent, newRun } from '../../../test/helpers/store-records.js';
import { createFloodReads, ON_THREAD_ABOVE } from './create-flood-reads.js';
import { createSqliteStats } from './create-sqlite-stats.js';
import { createReadThread, type ReadRequest, type ReadThread } from './create-read-thread.js';

describe('SQLite queue depths under a flood', () => {
  let f: SqliteFixture;
  let thread: ReadThread;
  beforeEach(async () => {
    f = await createSqliteFixture();
    thread = createReadThread(f.path);
  });
  afterEach(async () => {
    await thread.close();
    await f.dispose();
  });

  it('reads them on a thread of its own past the threshold, the same as on the serving thread below it', async () => {
    const reads: ReadRequest[] = [];
    const stats = createSqliteStats(
      { db: f.raw, write: () => Promise.reject(new Error('no writes here')), now: () => 0 },
      f.path,
      createFloodReads(f.raw, (read) => {
        reads.push(read);
        return thread.read(read);
      }),
    );
    const events = Array.from({ length: ON_THREAD_ABOVE }, (_, i) =>
      newEvent(`e${i}`, { mode: 'next-heartbeat', createdAt: 100 + i }),
    );
    await f.store.recordActions({ events, runs: [newRun('s', { createdAt: 50 })], idempotency: null });
    const below = await stats.readQueueStats();
    assert.equal(below.pendingEvents, ON_THREAD_ABOVE);
    assert.deepEqual(reads, [], 'at the threshold: on the serving thread');
    await f.store.addSystemEvent(newEvent('one more', { mode: 'next-heartbeat', createdAt: 99 }));
    const above = await stats.readQueueStats();
    assert.deepEqual(reads, [{ kind: 'queue' }], 'past it: on a thread');
    assert.deepEqual(above, { ...below, pendingEvents: ON_THREAD_ABOVE + 1, oldestPendingEventAt: 99 });
  });
});
