import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync, type fdatasync, type fdatasyncSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { isStoreUnavailable } from '../is-store-unavailable.js';
import type { CommitObservation } from '../store-stats.js';
import { createGroupCommit } from './create-group-commit.js';
import { createWalSync, WalSyncError, type WalSync } from './create-wal-sync.js';

type SyncCallback = (error: NodeJS.ErrnoException | null) => void;

interface Setup {
  dir: string;
  path: string;
  /** Syncs started on the thread pool, completed by the test. */
  syncs: SyncCallback[];
  sync: typeof fdatasync;
  /** Syncs made on the event loop; `failNow` makes the next one throw; each takes `ms` on `now`. */
  inline: { count: number; failNow: boolean; ms: number };
  syncNow: typeof fdatasyncSync;
  /** A clock the syncs on the spot move, and the test (pass `now` to time the syncs by it). */
  time: { at: number };
  now: () => number;
}

/** A WAL file, a sync that completes when the test says so, and a sync on the spot it counts and times. */
function setup(): Setup {
  const dir = mkdtempSync(join(tmpdir(), 'hookgate-walsync-'));
  const path = join(dir, 'x.db-wal');
  writeFileSync(path, '');
  const syncs: SyncCallback[] = [];
  const sync = ((_fd: number, cb: SyncCallback) => {
    syncs.push(cb);
  }) as typeof fdatasync;
  const inline = { count: 0, failNow: false, ms: 0 };
  const time = { at: 0 };
  const syncNow = (() => {
    inline.count++;
    time.at += inline.ms;
    if (inline.failNow) throw Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' });
  }) as typeof fdatasyncSync;
  return { dir, path, syncs, sync, inline, syncNow, time, now: () => time.at };
}

/** `setup()` with a sync timed by its clock, each sync on the spot taking `ms`; `end` closes it and removes the files. */
function timed(ms: number): Setup & { w: WalSync; end: () => Promise<void> } {
  const s = setup();
  s.inline.ms = ms;
  const w = createWalSync(s.path, { sync: s.sync, syncNow: s.syncNow, now: s.now });
  const end = async (): Promise<void> => {
    await w.close();
    rmSync(s.dir, { recursive: true, force: true });
  };
  return { ...s, w, end };
}

describe('createWalSync', () => {
  it('answers a commit only after a sync that started after it, and lets commits made meanwhile share the next sync', async () => {
    const { dir, path, syncs, sync, syncNow } = setup();
    const w = createWalSync(path, { sync, syncNow });
    const done: string[] = [];
    w.afterCommit(() => done.push('a'), 100);
    assert.equal(syncs.length, 1, 'the first commit starts a sync at once');
    w.afterCommit(() => done.push('b'), 100);
    w.afterCommit(() => done.push('c'), 100);
    assert.equal(syncs.length, 1, 'commits during a sync do not start another one beside it');
    syncs[0]!(null);
    assert.deepEqual(done, ['a'], 'the sync in flight covers only the commit made before it started');
    assert.equal(syncs.length, 2, 'one sync follows for the commits that waited');
    syncs[1]!(null);
    assert.deepEqual(done, ['a', 'b', 'c']);
    assert.equal(syncs.length, 2, 'nothing left to sync');
    await w.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('syncs a commit of a few writes on the spot, unless a sync is in flight, and reports its failure the same way', async () => {
    // Syncs on the spot take 0.5 ms: not slow, not fast enough for large commits.
    const { syncs, inline, w, end } = timed(0.5);
    const done: Array<Error | null> = [];
    w.afterCommit((e) => done.push(e), 3);
    assert.equal(done.length, 1, 'answered before afterCommit returned');
    assert.equal(done[0], null);
    assert.equal(inline.count, 1);
    assert.equal(syncs.length, 0, 'nothing went to the thread pool');
    w.whenSynced((e) => done.push(e));
    assert.equal(done.length, 2, 'the inline sync counts as synced');
    w.afterCommit((e) => done.push(e), 8);
    assert.equal(syncs.length, 1, 'eight writes go to the thread pool');
    w.afterCommit((e) => done.push(e), 1);
    assert.equal(inline.count, 1, 'a small commit behind a sync in flight waits for the next one');
    syncs[0]!(null);
    syncs[1]!(null);
    assert.equal(done.length, 4);
    inline.failNow = true;
    w.afterCommit((e) => done.push(e), 1);
    assert.ok(done[4] instanceof WalSyncError && isStoreUnavailable(done[4]));
    await end();
  });

  it('sends small commits to the thread pool while syncs are slow, and syncs them on the spot again once syncs are fast', async () => {
    const { syncs, inline, time, w, end } = timed(10);
    const noop = (): void => {};
    w.afterCommit(noop, 1);
    assert.equal(inline.count, 1, 'the first small commit syncs on the spot');
    w.afterCommit(noop, 1);
    assert.equal(syncs.length, 1, 'after a 10 ms sync the next small commit goes to the thread pool');
    inline.ms = 0.1;
    let fast = 0;
    let pooled = syncs.length;
    while (pooled > 0 && fast < 50) {
      time.at += 0.1;
      syncs.shift()!(null);
      w.afterCommit(noop, 1);
      pooled = syncs.length;
      fast++;
    }
    assert.ok(fast > 1 && fast < 50, `a few fast syncs bring small commits back to the event loop (after ${fast})`);
    assert.equal(inline.count, 2);
    await end();
  });

  it('syncs commits of any size on the spot while the disk is fast, and large ones on the thread pool once it is slow', async () => {
    const { syncs, inline, w, end } = timed(0.1);
    const done: string[] = [];
    w.afterCommit(() => done.push('small'), 1);
    w.afterCommit(() => done.push('large'), 100);
    assert.deepEqual(done, ['small', 'large'], 'both answered before afterCommit returned');
    assert.equal(inline.count, 2);
    assert.equal(syncs.length, 0, 'nothing went to the thread pool');
    inline.ms = 0.5;
    for (let i = 0; i < 20; i++) {
      w.afterCommit(() => done.push('small'), 1);
      syncs.shift()?.(null);
    }
    const onTheSpot = inline.count;
    w.afterCommit(() => done.push('small'), 1);
    assert.equal(inline.count, onTheSpot + 1, 'a small commit among small ones still syncs on the spot at 0.5 ms');
    w.afterCommit(() => done.push('large'), 100);
    assert.equal(syncs.length, 1, 'a large commit goes to the thread pool once syncs take 0.5 ms');
    assert.equal(done.length, 23);
    syncs.shift()!(null);
    assert.equal(done.length, 24);
    await end();
  });

  it('sends the small commits between large ones to the thread pool, and syncs them on the spot again once commits are small', async () => {
    // Neither fast nor slow: small commits on their own sync on the spot, large ones on the thread pool.
    const { syncs, inline, w, end } = timed(0.5);
    const noop = (): void => {};
    w.afterCommit(noop, 1);
    assert.equal(inline.count, 1);
    // A saturated closed loop: large groups, and small ones between them.
    const load = [40, 40, 2, 40, 2, 40, 5, 40, 2, 40, 2, 40, 2, 40, 2];
    for (const [i, writes] of load.entries()) {
      w.afterCommit(noop, writes);
      assert.equal(syncs.length, 1, `commit ${i + 1} of the load (${writes} writes) went to the thread pool`);
      syncs.shift()!(null);
    }
    assert.equal(inline.count, 1, 'no small commit stopped the event loop while commits were large');
    let small = 0;
    while (inline.count === 1 && small < 50) {
      w.afterCommit(noop, 2);
      syncs.shift()?.(null);
      small++;
    }
    assert.ok(small > 1 && small < 20, `once the load is over, small commits sync on the spot again (after ${small})`);
    await end();
  });

  it('measures the disk again every 100th large commit while they go to the thread pool, and keeps them on the spot once it is fast', async () => {
    const { syncs, inline, w, end } = timed(0.1);
    let answered = 0;
    // Never measured: large commits go to the thread pool (a flood from the first request).
    for (let i = 1; i < 100; i++) {
      w.afterCommit(() => answered++, 50);
      assert.equal(syncs.length, 1, `commit ${i} went to the thread pool`);
      syncs.shift()!(null);
    }
    assert.equal(inline.count, 0);
    w.afterCommit(() => answered++, 50);
    assert.equal(inline.count, 1, 'the 100th is synced on the spot');
    w.afterCommit(() => answered++, 50);
    assert.equal(inline.count, 2, 'the disk syncs in 0.1 ms: the next large commit stays on the spot');
    assert.equal(syncs.length, 0);
    assert.equal(answered, 101);
    await end();
  });

  it('keeps small commits on the spot while syncs made there are fast, however late the thread pool answers', async () => {
    const { syncs, inline, time, w, end } = timed(0.3);
    const noop = (): void => {};
    w.afterCommit(noop, 1);
    // Large commits on the thread pool, each answered 5 ms later (an event loop busy under load).
    for (let i = 0; i < 5; i++) {
      w.afterCommit(noop, 50);
      time.at += 5;
      syncs.shift()!(null);
    }
    // The small commits right after large ones go to the thread pool, answered late as well.
    let small = 0;
    while (inline.count === 1 && small < 50) {
      w.afterCommit(noop, 1);
      if (syncs.length > 0) {
        time.at += 5;
        syncs.shift()!(null);
      }
      small++;
    }
    assert.ok(small < 20, `small commits come back to the spot once commits are small (after ${small}), late answers notwithstanding`);
    assert.equal(inline.count, 2);
    await end();
  });

  it('syncs every 100th commit on the spot while all go to the thread pool, and a fast disk brings them back', async () => {
    const { syncs, inline, time, w, end } = timed(0.1);
    const noop = (): void => {};
    // Never measured on the spot, and the thread pool answers 5 ms late: once that is the average,
    // small commits go there too.
    let pooled = 0;
    const commit = (writes: number): void => {
      w.afterCommit(noop, writes);
      if (syncs.length === 0) return;
      pooled++;
      time.at += 5;
      syncs.shift()!(null);
    };
    for (let i = 0; i < 5; i++) commit(50);
    for (let i = 0; i < 90; i++) commit(1);
    assert.equal(inline.count, 0, 'every commit so far went to the thread pool');
    assert.equal(pooled, 95);
    for (let i = 0; i < 5; i++) commit(1);
    assert.equal(pooled, 99);
    assert.equal(inline.count, 1, 'the 100th is synced on the spot');
    w.afterCommit(noop, 1);
    w.afterCommit(noop, 50);
    assert.equal(inline.count, 3, 'the disk syncs in 0.1 ms: commits of any size stay on the spot');
    assert.equal(syncs.length, 0);
    await end();
  });

  it('answers whenSynced at once when nothing is unsynced, else after the sync that covers the last commit', async () => {
    const { dir, path, syncs, sync, syncNow } = setup();
    const w = createWalSync(path, { sync, syncNow });
    const done: string[] = [];
    w.whenSynced(() => done.push('idle'));
    assert.deepEqual(done, ['idle']);
    assert.equal(syncs.length, 0, 'no sync was needed');
    w.afterCommit(() => done.push('commit'), 100);
    w.whenSynced(() => done.push('read'));
    assert.equal(syncs.length, 1, 'the read waits for the sync in flight, which covers the commit');
    syncs[0]!(null);
    assert.deepEqual(done, ['idle', 'commit', 'read']);
    await w.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('fails every waiter with a store-unavailable error when the sync fails, and syncs again for the next commit', async () => {
    const { dir, path, syncs, sync, syncNow } = setup();
    const w = createWalSync(path, { sync, syncNow });
    const errors: Array<Error | null> = [];
    w.afterCommit((e) => errors.push(e), 100);
    w.afterCommit((e) => errors.push(e), 100);
    syncs[0]!(Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' }));
    assert.equal(errors.length, 2, 'the commit behind the failed sync is not left waiting');
    for (const e of errors) {
      assert.ok(e instanceof WalSyncError);
      assert.match(e.message, /could not be synced: EIO/);
      assert.equal(isStoreUnavailable(e), true, 'answered 503, not 500');
    }
    w.whenSynced((e) => errors.push(e));
    assert.equal(syncs.length, 2, 'after a failure nothing counts as synced until a sync succeeds');
    syncs[1]!(null);
    assert.equal(errors[2], null);
    await w.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('closes only after the syncs in flight and queued have finished', async () => {
    const { dir, path, syncs, sync, syncNow } = setup();
    const w = createWalSync(path, { sync, syncNow });
    let answered = 0;
    w.afterCommit(() => answered++, 100);
    w.afterCommit(() => answered++, 100);
    let closed = false;
    const closing = w.close().then(() => {
      closed = true;
    });
    await new Promise((r) => setImmediate(r));
    assert.equal(closed, false, 'a sync is in flight');
    syncs[0]!(null);
    await new Promise((r) => setImmediate(r));
    assert.equal(closed, false, 'a commit still waits for the next sync');
    syncs[1]!(null);
    await closing;
    assert.equal(answered, 2);
    rmSync(dir, { recursive: true, force: true });
  });
});

describe('createGroupCommit with a WAL sync', () => {
  it('answers the writes of a commit once the sync after it completes, commits what queued meanwhile at its end, and fails writes whose sync failed', async () => {
    const { dir, syncs, sync, inline, syncNow } = setup();
    const db = new Database(join(dir, 'x.db'));
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.exec('CREATE TABLE t (v INTEGER)');
    const w = createWalSync(join(dir, 'x.db-wal'), { sync, syncNow });
    const scheduled: Array<() => void> = [];
    const seen: CommitObservation[] = [];
    const group = createGroupCommit(db, { schedule: (fn) => scheduled.push(fn), afterCommit: w.afterCommit, observer: { onCommit: (c) => seen.push(c) } });
    const insert = db.prepare('INSERT INTO t VALUES (?)');
    let answered = 0;
    const first = [1, 2, 3, 4, 5, 6, 7, 8].map((v) => group.submit(() => insert.run(v)).then(() => answered++));
    scheduled.shift()!();
    assert.deepEqual(db.prepare('SELECT count(*) AS n FROM t').get(), { n: 8 }, 'committed');
    assert.equal(syncs.length, 1, 'eight writes are synced on the thread pool');
    await new Promise((r) => setImmediate(r));
    assert.equal(answered, 0, 'not answered before the sync');
    assert.equal(seen.length, 0, 'the commit is reported once it can be answered');

    const commits: number[] = [];
    const second = [9, 10].map((v) => group.submit(() => commits.push(v)));
    scheduled.shift()!();
    assert.deepEqual(commits, [], 'writes made while a commit waits for its sync wait for that sync');
    syncs.shift()!(null);
    await Promise.all(first);
    assert.equal(answered, 8);
    assert.deepEqual(seen.slice(0, 2).map((c) => [c.writes, c.ok]), [[8, true], [2, true]]);
    assert.deepEqual(commits, [9, 10], 'the end of the sync commits what queued, in one batch');
    assert.equal(inline.count, 1, 'two writes are synced on the spot');
    await Promise.all(second);

    inline.failNow = true;
    const third = group.submit(() => insert.run(11));
    scheduled.shift()!();
    await assert.rejects(third, (e: unknown) => e instanceof WalSyncError && isStoreUnavailable(e));
    assert.deepEqual(seen.map((c) => c.ok), [true, true, false], 'a commit whose sync failed is reported failed');
    await w.close();
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });
});
