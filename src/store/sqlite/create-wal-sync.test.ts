import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync, type fdatasync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { isStoreUnavailable } from '../is-store-unavailable.js';
import { createGroupCommit } from './create-group-commit.js';
import { createWalSync, WalSyncError } from './create-wal-sync.js';

type SyncCallback = (error: NodeJS.ErrnoException | null) => void;

/** A WAL file and a sync that completes when the test says so. */
function setup(): { dir: string; path: string; syncs: SyncCallback[]; sync: typeof fdatasync } {
  const dir = mkdtempSync(join(tmpdir(), 'hookgate-walsync-'));
  const path = join(dir, 'x.db-wal');
  writeFileSync(path, '');
  const syncs: SyncCallback[] = [];
  const sync = ((_fd: number, cb: SyncCallback) => {
    syncs.push(cb);
  }) as typeof fdatasync;
  return { dir, path, syncs, sync };
}

describe('createWalSync', () => {
  it('answers a commit only after a sync that started after it, and lets commits made meanwhile share the next sync', async () => {
    const { dir, path, syncs, sync } = setup();
    const w = createWalSync(path, sync);
    const done: string[] = [];
    w.afterCommit(() => done.push('a'));
    assert.equal(syncs.length, 1, 'the first commit starts a sync at once');
    w.afterCommit(() => done.push('b'));
    w.afterCommit(() => done.push('c'));
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

  it('answers whenSynced at once when nothing is unsynced, else after the sync that covers the last commit', async () => {
    const { dir, path, syncs, sync } = setup();
    const w = createWalSync(path, sync);
    const done: string[] = [];
    w.whenSynced(() => done.push('idle'));
    assert.deepEqual(done, ['idle']);
    assert.equal(syncs.length, 0, 'no sync was needed');
    w.afterCommit(() => done.push('commit'));
    w.whenSynced(() => done.push('read'));
    assert.equal(syncs.length, 1, 'the read waits for the sync in flight, which covers the commit');
    syncs[0]!(null);
    assert.deepEqual(done, ['idle', 'commit', 'read']);
    await w.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('fails every waiter with a store-unavailable error when the sync fails, and syncs again for the next commit', async () => {
    const { dir, path, syncs, sync } = setup();
    const w = createWalSync(path, sync);
    const errors: Array<Error | null> = [];
    w.afterCommit((e) => errors.push(e));
    w.afterCommit((e) => errors.push(e));
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
    const { dir, path, syncs, sync } = setup();
    const w = createWalSync(path, sync);
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
  it('answers the writes of a commit once the sync after it completes, and fails them if it fails', async () => {
    const { dir, syncs, sync } = setup();
    const db = new Database(join(dir, 'x.db'));
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.exec('CREATE TABLE t (v INTEGER)');
    const w = createWalSync(join(dir, 'x.db-wal'), sync);
    const scheduled: Array<() => void> = [];
    const group = createGroupCommit(db, { schedule: (fn) => scheduled.push(fn), afterCommit: w.afterCommit });
    const insert = db.prepare('INSERT INTO t VALUES (?)');
    let answered = 0;
    const first = [1, 2].map((v) => group.submit(() => insert.run(v)).then(() => answered++));
    scheduled.shift()!();
    assert.deepEqual(db.prepare('SELECT count(*) AS n FROM t').get(), { n: 2 }, 'committed');
    await new Promise((r) => setImmediate(r));
    assert.equal(answered, 0, 'not answered before the sync');
    syncs.shift()!(null);
    await Promise.all(first);
    assert.equal(answered, 2);

    const second = group.submit(() => insert.run(3));
    scheduled.shift()!();
    syncs.shift()!(Object.assign(new Error('EIO'), { code: 'EIO' }));
    await assert.rejects(second, (e: unknown) => e instanceof WalSyncError && isStoreUnavailable(e));
    await w.close();
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });
});
