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

/** The error a failed fdatasync gives. */
const EIO = (): NodeJS.ErrnoException => Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' });

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
    if (inline.failNow) throw EIO();
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

/** `timed(10)` after one commit synced on the spot: the disk is measured slow, so the next commits go to the thread pool. */
function slowDisk(): Setup & { w: WalSync; end: () => Promise<void> } {
  const t = timed(10);
  t.w.afterCommit(() => {});
  assert.equal(t.inline.count, 1, 'the first commit is synced on the spot, measuring the disk');
  return t;
}

describe('createWalSync', () => {
  it('syncs every commit on the spot while the disk is not slow, and reports a failed sync the same way', async () => {
    // Syncs on the spot take 0.5 ms: under INLINE_MAX_MS.
    const { syncs, inline, w, end } = timed(0.5);
    const done: Array<Error | null> = [];
    for (let i = 0; i < 20; i++) {
      w.afterCommit((e) => done.push(e));
      assert.equal(done.length, i + 1, `commit ${i + 1} answered before afterCommit returned`);
    }
    assert.equal(done.filter((e) => e !== null).length, 0);
    assert.equal(inline.count, 20);
    assert.equal(syncs.length, 0, 'nothing went to the thread pool');
    w.whenSynced((e) => done.push(e));
    assert.equal(done.length, 21, 'the syncs on the spot count as synced');
    inline.failNow = true;
    w.afterCommit((e) => done.push(e));
    assert.ok(done[21] instanceof WalSyncError && isStoreUnavailable(done[21]));
    await end();
  });

  it('answers a commit only after a sync that started after it, and lets commits made meanwhile share the next sync', async () => {
    const { syncs, inline, w, end } = slowDisk();
    const done: string[] = [];
    w.afterCommit(() => done.push('a'));
    assert.equal(syncs.length, 1, 'after a 10 ms sync the next commit goes to the thread pool');
    w.afterCommit(() => done.push('b'));
    w.afterCommit(() => done.push('c'));
    assert.equal(syncs.length, 1, 'commits during a sync do not start another one beside it');
    syncs[0]!(null);
    assert.deepEqual(done, ['a'], 'the sync in flight covers only the commit made before it started');
    assert.equal(syncs.length, 2, 'one sync follows for the commits that waited');
    syncs[1]!(null);
    assert.deepEqual(done, ['a', 'b', 'c']);
    assert.equal(syncs.length, 2, 'nothing left to sync');
    assert.equal(inline.count, 1);
    await end();
  });

  it('syncs on the spot again once syncs on the thread pool are fast', async () => {
    const { syncs, inline, time, w, end } = slowDisk();
    const noop = (): void => {};
    w.afterCommit(noop);
    assert.equal(syncs.length, 1);
    let fast = 0;
    while (syncs.length > 0 && fast < 50) {
      time.at += 0.1;
      syncs.shift()!(null);
      w.afterCommit(noop);
      fast++;
    }
    assert.ok(fast > 1 && fast < 50, `a few fast syncs bring commits back to the event loop (after ${fast})`);
    assert.equal(inline.count, 2);
    await end();
  });

  it('measures the disk again every 100th commit while they go to the thread pool, and keeps them on the spot once it is fast, however late the thread pool answers', async () => {
    // A disk measured at 10 ms, then syncing in 0.1 ms; the thread pool answers 5 ms late (an event loop busy under load).
    const { syncs, inline, time, w, end } = slowDisk();
    const noop = (): void => {};
    inline.ms = 0.1;
    const probes: number[] = [];
    let commits = 0;
    while (commits < 2_000) {
      commits++;
      const before = inline.count;
      w.afterCommit(noop);
      if (inline.count > before) {
        probes.push(commits);
        if (probes.length > 1 && probes.at(-2) === commits - 1) break;
        continue;
      }
      assert.equal(syncs.length, 1, `commit ${commits} went to the thread pool`);
      time.at += 5;
      syncs.shift()!(null);
    }
    // The average of the syncs on the spot falls from 10 ms by a fifth of the gap at each probe (8.02, 6.44, …): under 1 ms at the 11th.
    const expected = [...Array.from({ length: 11 }, (_, i) => (i + 1) * 100), 1_101];
    assert.deepEqual(
      probes,
      expected,
      'every 100th commit is synced on the spot; once the disk measures fast, the next stays there',
    );
    for (let i = 0; i < 10; i++) w.afterCommit(noop);
    assert.equal(syncs.length, 0);
    await end();
  });

  it('answers whenSynced at once when nothing is unsynced, else after the sync that covers the last commit', async () => {
    const { syncs, w, end } = slowDisk();
    const done: string[] = [];
    w.whenSynced(() => done.push('idle'));
    assert.deepEqual(done, ['idle']);
    assert.equal(syncs.length, 0, 'no sync was needed');
    w.afterCommit(() => done.push('commit'));
    w.whenSynced(() => done.push('read'));
    assert.equal(syncs.length, 1, 'the read waits for the sync in flight, which covers the commit');
    syncs[0]!(null);
    assert.deepEqual(done, ['idle', 'commit', 'read']);
    await end();
  });

  it('fails every waiter with a store-unavailable error when the sync fails, and syncs again for the next commit', async () => {
    const { syncs, w, end } = slowDisk();
    const errors: Array<Error | null> = [];
    w.afterCommit((e) => errors.push(e));
    w.afterCommit((e) => errors.push(e));
    syncs[0]!(EIO());
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
    await end();
  });

  it('closes only after the syncs in flight and queued have finished', async () => {
    const { dir, syncs, w } = slowDisk();
    let answered = 0;
    w.afterCommit(() => answered++);
    w.afterCommit(() => answered++);
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
    const { dir, syncs, inline, w } = slowDisk();
    const db = new Database(join(dir, 'x.db'));
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.exec('CREATE TABLE t (v INTEGER)');
    const scheduled: Array<() => void> = [];
    const seen: CommitObservation[] = [];
    const group = createGroupCommit(db, {
      schedule: (fn) => scheduled.push(fn),
      afterCommit: w.afterCommit,
      observer: { onCommit: (c) => seen.push(c) },
    });
    const insert = db.prepare('INSERT INTO t VALUES (?)');
    let answered = 0;
    const first = [1, 2, 3, 4, 5, 6, 7, 8].map((v) => group.submit(() => insert.run(v)).then(() => answered++));
    scheduled.shift()!();
    assert.deepEqual(db.prepare('SELECT count(*) AS n FROM t').get(), { n: 8 }, 'committed');
    assert.equal(syncs.length, 1, 'the commit is synced on the thread pool');
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
    assert.deepEqual(
      seen.map((c) => [c.writes, c.ok]),
      [[8, true]],
    );
    assert.deepEqual(commits, [9, 10], 'the end of the sync commits what queued, in one batch');
    assert.equal(syncs.length, 1, 'and starts its sync');
    syncs.shift()!(null);
    await Promise.all(second);
    assert.deepEqual(
      seen.map((c) => [c.writes, c.ok]),
      [
        [8, true],
        [2, true],
      ],
    );

    const third = group.submit(() => insert.run(11));
    scheduled.shift()!();
    syncs.shift()!(EIO());
    await assert.rejects(third, (e: unknown) => e instanceof WalSyncError && isStoreUnavailable(e));
    assert.deepEqual(
      seen.map((c) => c.ok),
      [true, true, false],
      'a commit whose sync failed is reported failed',
    );
    assert.equal(inline.count, 1, 'no commit after the first was synced on the spot');
    await w.close();
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });
});
