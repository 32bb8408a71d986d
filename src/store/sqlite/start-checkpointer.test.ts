import { describe, it, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { createGroupCommit, type GroupCommit } from './create-group-commit.js';
import { unpackRecords } from './request-batch.js';
import { startCheckpointer, type Checkpointer, type CheckpointReport } from './start-checkpointer.js';

const PAGE = 4096;
/** A WAL frame: a 24-byte header and a page. */
const FRAME = PAGE + 24;
const RESTART_FRAMES = 32;

describe('startCheckpointer', () => {
  let dir: string;
  let path: string;
  let db: Database.Database;
  let group: GroupCommit;
  let holds: number;
  let releases: number;
  let failures: Error[];
  let ready: number;
  let checkpointer: Checkpointer;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'hookgate-ckpt-'));
    path = join(dir, 'c.db');
    db = new Database(path);
    db.pragma('journal_mode = WAL');
    db.pragma(`page_size = ${PAGE}`);
    // As the serving store has it: this connection never checkpoints, the thread does.
    db.pragma('wal_autocheckpoint = 0');
    db.pragma(`journal_size_limit = ${8 * FRAME}`);
    db.exec('CREATE TABLE t (seq INTEGER PRIMARY KEY, v BLOB NOT NULL)');
    group = createGroupCommit(db);
    holds = 0;
    releases = 0;
    failures = [];
    ready = 0;
    checkpointer = startCheckpointer({
      path,
      sync: 'NORMAL',
      // The timer stays out of the way: the test asks for each checkpoint.
      intervalMs: 3_600_000,
      restartFrames: RESTART_FRAMES,
      hold: () => {
        holds++;
        group.hold();
      },
      release: () => {
        releases++;
        group.release();
      },
      onReady: () => {
        ready++;
      },
      onFailed: (error) => failures.push(error),
    });
  });
  afterEach(async () => {
    await checkpointer.stop();
    if (db.open) db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const insert = (): Promise<unknown> =>
    group.submit(() => db.prepare('INSERT INTO t (v) VALUES (randomblob(3000))').run());
  const walBytes = (): number => statSync(`${path}-wal`, { throwIfNoEntry: false })?.size ?? 0;

  it('keeps the WAL bounded while the writer keeps committing, holding it once the WAL is past its bound', async () => {
    const rounds = 60;
    const perRound = 8;
    let maxWal = 0;
    const reports: CheckpointReport[] = [];
    for (let r = 0; r < rounds; r++) {
      // The checkpoint runs on its thread while this round's commits go on here.
      const checkpoint = checkpointer.checkpointNow();
      for (let i = 0; i < perRound; i++) await insert();
      reports.push(await checkpoint);
      maxWal = Math.max(maxWal, walBytes());
    }
    const written = rounds * perRound * FRAME;
    assert.equal(ready, 1, 'the thread said once that it checkpoints from now on');
    assert.ok(
      reports.some((r) => r.held),
      'the writer was held for a full checkpoint at least once',
    );
    assert.equal(holds, releases, 'every hold was released');
    assert.ok(
      maxWal <= 4 * RESTART_FRAMES * FRAME,
      `the WAL stayed within its bound: ${maxWal} bytes, ${written} written`,
    );
    assert.equal(
      (db.prepare('SELECT count(*) AS n FROM t').get() as { n: number }).n,
      rounds * perRound,
      'no write was lost to a hold',
    );
    assert.deepEqual(failures, []);
  });

  it('stops with its connection closed: the last connection to close removes the WAL', async () => {
    for (let i = 0; i < 4; i++) await insert();
    await checkpointer.checkpointNow();
    await checkpointer.stop();
    await assert.rejects(checkpointer.checkpointNow(), /not running/);
    assert.ok(existsSync(`${path}-wal`));
    db.close();
    assert.equal(existsSync(`${path}-wal`), false, 'the thread no longer held the database open');
    assert.deepEqual(failures, [], 'a stop is not a failure');
  });

  const packed = (json: string): Promise<string | Buffer> => new Promise((resolve) => checkpointer.pack(json, resolve));

  it('compresses a request batch on its thread, as the batch would be stored', async () => {
    const json = JSON.stringify({
      v: 2,
      at: 1,
      shapes: [],
      records: Array.from({ length: 200 }, (_, i) => [`id-${i}`]),
    });
    const records = await packed(json);
    assert.ok(Buffer.isBuffer(records), 'compressed');
    assert.ok(records.length < json.length / 4);
    assert.equal(unpackRecords(records), json);
  });

  it("compresses a batch on libuv's pool once the thread has stopped", async () => {
    await checkpointer.stop();
    const json = JSON.stringify({ v: 2, at: 1, shapes: [], records: [['after']] });
    assert.equal(unpackRecords(await packed(json)), json);
  });
});
