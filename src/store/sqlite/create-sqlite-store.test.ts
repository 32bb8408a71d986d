import { describe, it, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, fdatasync, fdatasyncSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { createIds } from '../../common/ids.js';
import { StoreStalledError } from '../create-stall-watch.js';
import { isStoreUnavailable } from '../is-store-unavailable.js';
import type { Store } from '../store.js';
import type { NewSystemEvent } from '../types.js';
import { createGroupCommit } from './create-group-commit.js';
import { createSqliteStore } from './create-sqlite-store.js';
import { StoreLockedError, StoreMissingError } from './lock-database.js';
import { MIGRATIONS } from './migrations.js';

const ids = createIds();
const source = { hook: 'wake', external: true, allowUnsafeExternalContent: false };
const event = (text: string): NewSystemEvent => ({
  id: ids.next(),
  agentId: 'main',
  sessionKey: 'agent:main:main',
  text,
  mode: 'now',
  source,
  createdAt: Date.now(),
});

describe('createSqliteStore (what only SQLite has)', () => {
  let dir: string;
  let path: string;
  let store: Store;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'hookgate-store-'));
    path = join(dir, 'state', 'h.db');
    store = createSqliteStore({ path });
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("refuses new ingress writes as unavailable while a commit's sync has not ended for stallMs, and takes them again after", async () => {
    await store.close();
    const held: Array<() => void> = [];
    let stall = true;
    let clock = 0;
    store = createSqliteStore({
      path,
      stallMs: 50,
      walSyncIo: {
        // A slow disk: each sync on the spot takes 10 ms by this clock, so commits after the first are synced on the thread pool.
        now: () => clock,
        syncNow: ((fd: number) => {
          clock += 10;
          fdatasyncSync(fd);
        }) as typeof fdatasyncSync,
        // A disk that stops answering: a sync on the thread pool does not come back until released.
        sync: ((fd: number, done: (error: Error | null) => void) => {
          if (stall) held.push(() => fdatasync(fd, done));
          else fdatasync(fd, done);
        }) as typeof fdatasync,
      },
    });
    await store.addSystemEvent(event('measured'));
    assert.equal(held.length, 0, 'the first commit was synced on the spot');
    const taken = Array.from({ length: 8 }, (_, i) => store.addSystemEvent(event(`taken ${i}`)));
    try {
      for (let i = 0; i < 100 && held.length === 0; i++) await new Promise((r) => setTimeout(r, 5));
      assert.equal(held.length, 1, 'the sync is under way');
      await new Promise((r) => setTimeout(r, 80));
      // Raced against a short timer: a write that queued instead would wait for the stalled sync.
      const soon = <T>(p: Promise<T>): Promise<T> =>
        Promise.race([
          p,
          new Promise<T>((_, reject) => setTimeout(() => reject(new Error('queued, not refused')), 500)),
        ]);
      await assert.rejects(
        soon(store.addSystemEvent(event('refused'))),
        (e) => e instanceof StoreStalledError && isStoreUnavailable(e),
      );
      await assert.rejects(
        soon(store.recordActions({ events: [event('refused too')], runs: [], idempotency: null })),
        StoreStalledError,
      );
    } finally {
      stall = false;
      for (const release of held) release();
    }
    await Promise.all(taken);
    await store.addSystemEvent(event('after'));
    const texts = (await store.listSystemEvents({ limit: 20 })).map((e) => e.text);
    assert.equal(texts.length, 10);
    assert.ok(
      texts.includes('after') && texts.includes('measured') && !texts.some((t) => t.startsWith('refused')),
      JSON.stringify(texts),
    );
  });

  it('uses WAL with synchronous FULL by default', () => {
    const db = new Database(path, { readonly: true });
    try {
      assert.equal(db.pragma('journal_mode', { simple: true }), 'wal');
    } finally {
      db.close();
    }
  });

  it("refuses a second serving store on the same database, naming it and the holder's pid", () => {
    assert.throws(
      () => createSqliteStore({ path }),
      (error: unknown) => {
        assert.ok(error instanceof StoreLockedError);
        assert.equal(error.holderPid, process.pid);
        assert.ok(
          error.message.includes(`${path} is in use by another hookgate process (pid ${process.pid})`),
          error.message,
        );
        return true;
      },
    );
  });

  it('lets the next gateway in once the holder closed', async () => {
    await store.addSystemEvent(event('kept'));
    await store.close();
    store = createSqliteStore({ path });
    assert.equal((await store.listSystemEvents()).length, 1);
  });

  it('opens for reading and for single-row writes beside the serving store, without its lock', async () => {
    await store.addSystemEvent(event('x'));
    const reader = createSqliteStore({ path, mode: 'read' });
    const writer = createSqliteStore({ path, mode: 'write' });
    try {
      assert.equal((await reader.listSystemEvents()).length, 1);
      await writer.addSystemEvent(event('y'));
      assert.equal((await store.listSystemEvents()).length, 2);
    } finally {
      await reader.close();
      await writer.close();
    }
  });

  it('stops its checkpoint thread on close: no connection is left, so the WAL is removed', async () => {
    await store.close();
    store = createSqliteStore({ path, checkpointDelayMs: 0, checkpointFromFrames: 0 });
    // Lets the thread's start (a timer of 0 ms) go first.
    await new Promise((resolve) => setTimeout(resolve, 0));
    await store.addSystemEvent(event('x'));
    assert.ok(existsSync(`${path}-wal`));
    await store.close();
    assert.equal(existsSync(`${path}-wal`), false);
  });

  it('starts no checkpoint thread while the WAL is small: nothing copies it into the database', async () => {
    await store.close();
    store = createSqliteStore({ path, checkpointDelayMs: 5, checkpointFromFrames: 100_000 });
    const before = statSync(path).size;
    for (let i = 0; i < 20; i++) await store.addSystemEvent(event(`small ${i}`));
    await new Promise((resolve) => setTimeout(resolve, 400));
    assert.equal(statSync(path).size, before, 'the pages are still in the WAL only');
  });

  it('starts the checkpoint thread once the WAL holds its frames, which copies them into the database', async () => {
    await store.close();
    store = createSqliteStore({ path, checkpointDelayMs: 5, checkpointFromFrames: 20 });
    const before = statSync(path).size;
    for (let i = 0; i < 40; i++) await store.addSystemEvent(event(`${'x'.repeat(3000)} ${i}`));
    for (let i = 0; i < 100 && statSync(path).size === before; i++) await new Promise((r) => setTimeout(r, 20));
    assert.ok(statSync(path).size > before, 'a checkpoint copied pages into the database file');
  });

  it('closes once for callers closing at the same time: each resolves with the database closed', async () => {
    await store.close();
    store = createSqliteStore({ path, checkpointDelayMs: 0, checkpointFromFrames: 0 });
    await new Promise((resolve) => setTimeout(resolve, 0));
    await store.addSystemEvent(event('x'));
    const both = [store.close(), store.close()];
    await both[1];
    assert.equal(existsSync(`${path}-wal`), false, 'the second caller waited for the close');
    await both[0];
    store = createSqliteStore({ path });
  });

  it('reports a database no gateway has created as missing, creating nothing', () => {
    const missing = join(dir, 'nope.db');
    assert.throws(() => createSqliteStore({ path: missing, mode: 'read' }), StoreMissingError);
    assert.throws(() => createSqliteStore({ path: missing, mode: 'write' }), StoreMissingError);
    assert.equal(existsSync(missing), false);
  });
});

/** A database in a temporary directory at the schema just before the migration containing `marker`. */
function databaseBefore(marker: string): { dir: string; path: string; db: Database.Database } {
  const dir = mkdtempSync(join(tmpdir(), 'hookgate-mig-'));
  const path = join(dir, 'm.db');
  const db = new Database(path);
  const before = MIGRATIONS.findIndex((sql) => sql.includes(marker));
  assert.ok(before > 0, `a migration contains ${marker}`);
  for (const sql of MIGRATIONS.slice(0, before)) db.exec(sql);
  db.pragma(`user_version = ${before}`);
  return { dir, path, db };
}

describe('createGroupCommit', () => {
  it('commits the writes of one turn together, in one scheduled flush', async () => {
    const db = new Database(':memory:');
    db.exec('CREATE TABLE t (v INTEGER)');
    const scheduled: Array<() => void> = [];
    const group = createGroupCommit(db, { schedule: (fn) => scheduled.push(fn) });
    const insert = db.prepare('INSERT INTO t VALUES (?)');
    const count = (): unknown => db.prepare('SELECT count(*) AS n FROM t').get();
    const done = [1, 2, 3].map((v) => group.submit(() => insert.run(v)));
    assert.equal(scheduled.length, 1, 'one flush scheduled for the whole batch');
    assert.deepEqual(count(), { n: 0 }, 'nothing is written before the flush');
    scheduled[0]!();
    await Promise.all(done);
    assert.deepEqual(count(), { n: 3 });
    void group.submit(() => insert.run(4));
    assert.equal(scheduled.length, 2, 'the next turn schedules its own flush');
    db.close();
  });

  it('holds commits back until released, then commits what queued meanwhile in one flush', async () => {
    const db = new Database(':memory:');
    db.exec('CREATE TABLE t (v INTEGER)');
    const scheduled: Array<() => void> = [];
    const group = createGroupCommit(db, { schedule: (fn) => scheduled.push(fn) });
    const insert = db.prepare('INSERT INTO t VALUES (?)');
    const count = (): unknown => db.prepare('SELECT count(*) AS n FROM t').get();
    group.hold();
    const first = group.submit(() => insert.run(1));
    scheduled.shift()!();
    const second = group.submit(() => insert.run(2));
    scheduled.shift()!();
    assert.deepEqual(count(), { n: 0 }, 'nothing commits while held');
    group.release();
    assert.equal(scheduled.length, 1, 'the release schedules one flush for what queued');
    scheduled.shift()!();
    await Promise.all([first, second]);
    assert.deepEqual(count(), { n: 2 });
    db.close();
  });

  /** A database with table `t` whose write lock `other` holds; `db` does not wait for it. Closed after `test`. */
  async function whileLocked(test: (db: Database.Database, other: Database.Database) => Promise<void>): Promise<void> {
    const dir = mkdtempSync(join(tmpdir(), 'hookgate-gc-'));
    const path = join(dir, 'g.db');
    const db = new Database(path);
    const other = new Database(path);
    try {
      db.pragma('busy_timeout = 0');
      db.exec('CREATE TABLE t (v INTEGER)');
      other.exec('BEGIN IMMEDIATE');
      await test(db, other);
    } finally {
      if (other.inTransaction) other.exec('ROLLBACK');
      other.close();
      db.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }

  it('fails a whole batch at once when the database is locked, instead of waiting write by write', async () => {
    await whileLocked(async (db) => {
      let tries = 0;
      const group = createGroupCommit(db);
      const insert = db.prepare('INSERT INTO t VALUES (?)');
      const results = await Promise.allSettled(
        [1, 2, 3].map((v) =>
          group.submit(() => {
            tries++;
            return insert.run(v);
          }),
        ),
      );
      assert.deepEqual(
        results.map((r) => r.status),
        ['rejected', 'rejected', 'rejected'],
      );
      assert.match(String((results[0] as PromiseRejectedResult).reason.code), /^SQLITE_BUSY/);
      assert.ok(tries <= 1, `the batch met the lock once and no write was retried alone (${tries} tries)`);
    });
  });

  it('after the lock fails a batch, fails the writes of a growing pause at once without trying the database', async () => {
    await whileLocked(async (db, other) => {
      let t = 0;
      let tries = 0;
      const group = createGroupCommit(db, { now: () => t });
      const insert = db.prepare('INSERT INTO t VALUES (?)');
      const submit = (v: number): Promise<unknown> =>
        group.submit(() => {
          tries++;
          return insert.run(v);
        });
      const busy = /^SQLITE_BUSY/;
      await assert.rejects(submit(1), (e: { code?: string }) => busy.test(String(e.code)));
      assert.equal(tries, 1);
      t = 200;
      await assert.rejects(
        submit(2),
        (e: { code?: string }) => busy.test(String(e.code)),
        'within the first pause (250 ms)',
      );
      assert.equal(tries, 1, 'the database was not tried during the pause');
      t = 260;
      await assert.rejects(submit(3));
      assert.equal(tries, 2, 'tried again once the pause was over');
      t = 700;
      await assert.rejects(submit(4));
      assert.equal(tries, 2, 'the second pause is twice as long (500 ms)');
      t = 770;
      other.exec('ROLLBACK');
      await submit(5);
      assert.equal(tries, 3, 'committed once the lock was gone and the pause over');
      other.exec('BEGIN IMMEDIATE');
      t = 800;
      await assert.rejects(submit(6));
      t = 1060;
      await assert.rejects(submit(7));
      assert.equal(tries, 5, 'a commit that succeeded ended the doubling: the next pause is 250 ms again');
      assert.deepEqual(db.prepare('SELECT v FROM t').all(), [{ v: 5 }]);
    });
  });

  it('fills in the hook of open and recent runs when it migrates a database from before budgets', async () => {
    const { dir, path, db } = databaseBefore('ADD COLUMN hook TEXT');
    const insert =
      db.prepare(`INSERT INTO runs (id, state, agent_id, session_key, message, name, wake_mode, deliver, channel,
      timeout_seconds, source, created_at, started_at) VALUES (?, ?, 'main', ?, 'm', 'n', 'now', 0, 'last', 30, ?, 1, ?)`);
    const src = (hook: string) => JSON.stringify({ hook, external: true, allowUnsafeExternalContent: false });
    insert.run('queued-run', 'queued', 's1', src('github'), null);
    insert.run('recent-run', 'succeeded', 's2', src('stripe'), Date.now() - 3_600_000);
    insert.run('old-run', 'succeeded', 's3', src('old'), Date.now() - 30 * 86_400_000);
    db.close();
    const migrated = createSqliteStore({ path });
    try {
      assert.equal((await migrated.getRun('queued-run'))?.heldReason, null);
      const check = new Database(path, { readonly: true });
      const hooks = check.prepare('SELECT id, hook FROM runs ORDER BY id').all();
      check.close();
      assert.deepEqual(hooks, [
        { id: 'old-run', hook: null },
        { id: 'queued-run', hook: 'github' },
        { id: 'recent-run', hook: 'stripe' },
      ]);
    } finally {
      await migrated.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('moves the request records of a database from before request batches into batches, readable as before', async () => {
    const { dir, path, db } = databaseBefore('CREATE TABLE request_batches');
    const insert =
      db.prepare(`INSERT INTO requests (id, at, method, path, hook, client, status, code, reason, duration_ms,
      event_ids, run_ids, payload) VALUES (?, ?, 'POST', '/hooks/wake', ?, '127.0.0.1', ?, ?, NULL, 1.5, ?, '[]', ?)`);
    const ids = createIds(() => 1_700_000_000_000);
    // Older records first: 1,100 of them, more than two batches' worth.
    const older = Array.from({ length: 1_100 }, () => ids.next());
    for (const id of older) insert.run(id, 500, 'wake', 200, null, '[]', null);
    const made = [ids.next(), ids.next(), ids.next()];
    insert.run(made[0], 1_000, 'wake', 200, null, '["e1"]', '{"text":"a"}');
    insert.run(made[1], 1_500, 'agent', 401, 'unauthorized', '[]', null);
    insert.run(made[2], 200_000, 'wake', 200, null, '["e2","e3"]', null);
    db.close();
    const migrated = createSqliteStore({ path });
    try {
      assert.deepEqual(
        (await migrated.listRequests({ limit: 4 })).map((r) => r.id),
        [...[...made].reverse(), older.at(-1)],
      );
      assert.deepEqual(await migrated.getRequest(made[0]!), {
        id: made[0],
        at: 1_000,
        method: 'POST',
        path: '/hooks/wake',
        hook: 'wake',
        client: '127.0.0.1',
        status: 200,
        code: null,
        reason: null,
        durationMs: 1.5,
        eventIds: ['e1'],
        runIds: [],
        payload: '{"text":"a"}',
        headers: null,
      });
      assert.deepEqual((await migrated.getRequest(made[2]!))?.eventIds, ['e2', 'e3']);
      assert.deepEqual(
        (await migrated.listRequests({ status: 401 })).map((r) => r.code),
        ['unauthorized'],
      );
      const check = new Database(path, { readonly: true });
      const batches = check.prepare('SELECT count, upto_id FROM request_batches ORDER BY seq').all();
      const tables = check.prepare("SELECT name FROM sqlite_master WHERE name = 'requests'").all();
      check.close();
      assert.deepEqual(
        batches,
        [
          { count: 512, upto_id: older[511] },
          { count: 512, upto_id: older[1023] },
          { count: 79, upto_id: made[2] },
        ],
        'batches of 512 in id order',
      );
      assert.equal(
        await migrated
          .countPrunable({ events: 0, runs: 0, deliveries: 0, transcript: 0, requests: 1_001, eventLog: 0 })
          .then((c) => c.requests),
        1_101,
      );
      assert.deepEqual(tables, []);
    } finally {
      await migrated.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
