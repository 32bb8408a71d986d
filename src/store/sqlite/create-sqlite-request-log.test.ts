import { describe, it, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { createIds } from '../../common/ids.js';
import type { RequestRecord } from '../request-record.js';
import { newRequestRecord } from '../../../test/helpers/store-records.js';
import {
  createSqliteRequestLog,
  FILTERED_ON_THREAD_ABOVE,
  type SqliteRequestLog,
} from './create-sqlite-request-log.js';
import { MIGRATIONS } from './migrations.js';
import { PACK_FROM_CHARS, packRecordsLater, recordWindowEnd, unpackRecords } from './request-batch.js';

/** The store's clock when pruning: every record's time below is before it. */
const NOW = 1_000;
/** A time further ahead of the clock than the store takes as in order (a clock that ran a year ahead for a moment). */
const AHEAD = NOW + 365 * 86_400_000;

// Every case runs on batches as a gateway writes them (small ones as text) and with every batch packed.
for (const packFromChars of [PACK_FROM_CHARS, 0])
  describe(`createSqliteRequestLog (batches packed from ${packFromChars} characters)`, () => {
    let db: Database.Database;
    let log: SqliteRequestLog;
    let writes: number;
    /** Writes handed to the group commit, committed or not. */
    let submitted: number;
    let failWrites: boolean;
    /** While set, compressions wait in `heldPacks` until a case lets each go (resolving once it has called back). */
    let holdPacking: boolean;
    let heldPacks: Array<() => Promise<void>>;
    const ids = createIds();
    const record = (o: Partial<RequestRecord> = {}): RequestRecord => newRequestRecord({ id: ids.next(), ...o });
    const batches = () => db.prepare('SELECT count FROM request_batches ORDER BY seq').pluck().all() as number[];
    /** Writes one batch of the records given, in order, now. */
    const batch = async (...records: RequestRecord[]) => {
      const committed = records.map((r) => log.recordRequest(r));
      log.flushPending();
      await Promise.all(committed);
    };

    beforeEach(() => {
      db = new Database(':memory:');
      for (const sql of MIGRATIONS) db.exec(sql);
      writes = 0;
      submitted = 0;
      failWrites = false;
      holdPacking = false;
      heldPacks = [];
      log = createSqliteRequestLog(
        {
          db,
          write: async <T>(fn: () => T) => {
            submitted++;
            await new Promise((resolve) => setImmediate(resolve));
            if (failWrites) throw new Error('disk full');
            writes++;
            return db.transaction(fn)();
          },
        },
        undefined,
        FILTERED_ON_THREAD_ABOVE,
        packFromChars,
        (json, done) => {
          if (!holdPacking) return packRecordsLater(json, done);
          heldPacks.push(
            () =>
              new Promise<void>((resolve) =>
                packRecordsLater(json, (records) => {
                  done(records);
                  resolve();
                }),
              ),
          );
        },
      );
    });
    afterEach(() => db.close());

    it('gathers the records of a moment into one row, written within 100 ms without being asked', async () => {
      const made = [record(), record(), record()];
      const committed = made.map((r) => log.recordRequest(r));
      await new Promise((resolve) => setTimeout(resolve, 20));
      assert.deepEqual(batches(), [], 'nothing written yet');
      await Promise.all(committed);
      assert.deepEqual(batches(), [3]);
      assert.equal(writes, 1);
      assert.deepEqual(
        (await log.listRequests()).map((r) => r.id),
        made.map((r) => r.id).reverse(),
      );
    });

    it('writes a batch at once when it reaches 512 records', async (t) => {
      // The 100 ms timer never fires here: only a batch written without it lets the records settle.
      t.mock.timers.enable({ apis: ['setTimeout'] });
      const committed = Array.from({ length: 512 }, () => log.recordRequest(record()));
      await Promise.all(committed);
      assert.deepEqual(batches(), [512], 'written before the 100 ms timer');
    });

    it('writes batches in the order they were gathered, a large one compressed meanwhile', async () => {
      const first = Array.from({ length: 512 }, () => record({ reason: 'x'.repeat(100) }));
      const committed = first.map((r) => log.recordRequest(r));
      const late = record();
      const lateCommitted = log.recordRequest(late);
      // The read writes the late batch; the large one before it is still being compressed.
      const listed = await log.listRequests({ limit: 600 });
      await Promise.all([...committed, lateCommitted]);
      assert.deepEqual(batches(), [512, 1]);
      assert.deepEqual(
        listed.map((r) => r.id),
        [late, ...first]
          .map((r) => r.id)
          .sort()
          .reverse(),
      );
      const uptos = db.prepare('SELECT upto_id FROM request_batches ORDER BY seq').pluck().all() as string[];
      assert.deepEqual(uptos, [first[first.length - 1]!.id, late.id]);
    });

    it('hands every batch to the group commit at once when the store shuts down, one being compressed included', async () => {
      holdPacking = true;
      const made = Array.from({ length: 512 }, () => record({ reason: 'x'.repeat(100) }));
      const committed = made.map((r) => log.recordRequest(r));
      const last = record();
      const lastCommitted = log.recordRequest(last);
      log.flushPending();
      assert.equal(submitted, 2, 'both batches queued before the store flushes its last commit');
      await Promise.all([...committed, lastCommitted]);
      assert.deepEqual(batches(), [512, 1]);
      // The compressions started before shutdown (the full batch's, and with every batch packed the
      // last one's) end afterwards and write nothing more.
      assert.equal(heldPacks.length, packFromChars === 0 ? 2 : 1, 'compressions in flight at shutdown');
      await Promise.all(heldPacks.map((letGo) => letGo()));
      assert.equal(submitted, 2, 'nothing handed to the group commit after shutdown');
      await new Promise((resolve) => setImmediate(resolve));
      assert.deepEqual(batches(), [512, 1]);
      const listed = await log.listRequests({ limit: 600 });
      assert.deepEqual(
        listed.map((r) => r.id),
        [...made, last].map((r) => r.id).reverse(),
      );
    });

    it('writes what it gathered before a read, so a read sees every record made before it', async () => {
      const r = record({ payload: '{"text":"hi"}' });
      void log.recordRequest(r);
      assert.deepEqual(await log.getRequest(r.id), r);
    });

    it('keeps the last record written under an id, in one batch or across batches', async () => {
      const a = record();
      const b = record();
      await batch(a, { ...a, status: 503, code: 'store_unavailable' }, b);
      assert.equal((await log.getRequest(a.id))?.status, 503);
      await batch({ ...b, status: 499, code: 'client_closed' });
      assert.equal((await log.getRequest(b.id))?.status, 499);
      assert.deepEqual(
        (await log.listRequests()).map((r) => [r.id, r.status]),
        [
          [b.id, 499],
          [a.id, 503],
        ],
      );
      assert.deepEqual(
        (await log.listRequests({ status: 200 })).map((r) => r.id),
        [],
        'an older version no longer matches',
      );
    });

    it('lists by arrival even when a long request is written after newer ones', async () => {
      const long = record();
      const quick = [record(), record()];
      await batch(quick[0]!);
      await batch(quick[1]!);
      await batch(long);
      assert.deepEqual(
        (await log.listRequests({ limit: 1 })).map((r) => r.id),
        [quick[1]!.id],
      );
      assert.deepEqual(
        (await log.listRequests()).map((r) => r.id),
        [quick[1]!.id, quick[0]!.id, long.id],
      );
      assert.equal((await log.getRequest(long.id))?.id, long.id);
    });

    it('stops a listing at the limit without reading older batches', async () => {
      for (let i = 0; i < 5; i++) await batch(record());
      db.prepare("UPDATE request_batches SET records = 'not json' WHERE seq = 1").run();
      assert.equal((await log.listRequests({ limit: 2 })).length, 2, 'the damaged oldest batch is never read');
    });

    it('prunes the oldest records before the cut-off, whole batches or part of one, up to the limit', async () => {
      await batch(record({ at: 10 }), record({ at: 20 }));
      await batch(record({ at: 30 }), record({ at: 500 }), record({ at: 40 }));
      await batch(record({ at: 600 }));
      assert.equal(log.countRecordsBefore(100), 4);
      assert.equal(db.transaction(() => log.pruneRecords(100, 3, NOW))(), 3);
      assert.deepEqual(batches(), [2, 1], 'the first batch went whole, the second lost its oldest');
      assert.deepEqual(
        (await log.listRequests()).map((r) => r.at),
        [600, 40, 500],
        'newest arrival first',
      );
      assert.equal(db.transaction(() => log.pruneRecords(100, 10, NOW))(), 1);
      assert.deepEqual(
        (await log.listRequests()).map((r) => r.at),
        [600, 500],
      );
      assert.equal(db.transaction(() => log.pruneRecords(100, 10, NOW))(), 0);
      assert.equal(log.countRecordsBefore(100), 0);
    });

    it('keeps the last version of a record written twice when pruning rewrites its batch', async () => {
      const kept = record({ at: 600 });
      await batch(kept, record({ at: 10 }), { ...kept, status: 499, code: 'client_closed' });
      assert.equal(db.transaction(() => log.pruneRecords(100, 10, NOW))(), 1);
      assert.deepEqual(batches(), [1], 'the old record went; the other stays, once');
      assert.equal((await log.getRequest(kept.id))?.status, 499);
      assert.deepEqual(
        (await log.listRequests()).map((r) => r.status),
        [499],
      );
    });

    it('holds one version of a record written twice in a batch, and counts it once', async () => {
      const answered = record({ at: 10, status: 202 });
      await batch(answered, record({ at: 20 }), { ...answered, status: 499, code: 'client_closed' });
      assert.deepEqual(batches(), [2]);
      assert.equal(log.countRecordsBefore(100), 2);
      assert.equal(db.transaction(() => log.pruneRecords(100, 10, NOW))(), 2);
      assert.deepEqual(batches(), []);
    });

    it('counts once a record whose batch holds two versions of it (rows written before batches held one)', async () => {
      const twice = record({ at: 10, status: 202 });
      const other = record({ at: 20 });
      const late = record({ at: 600 });
      await batch(twice, other, late);
      // As rows were written when a batch kept every version: the record's 202, then its 499.
      const versions = [twice, other, late, { ...twice, status: 499, code: 'client_closed' }].map((r) => [
        r.id,
        r.at,
        r.method,
        r.path,
        r.hook,
        r.client,
        r.status,
        r.code,
        r.reason,
        r.durationMs,
        r.eventIds,
        r.runIds,
        r.payload,
      ]);
      db.prepare('UPDATE request_batches SET records = ?, count = 4').run(JSON.stringify(versions));
      assert.equal(log.countRecordsBefore(100), 2, 'the batch straddles the cut-off: its records are read');
      assert.equal(db.transaction(() => log.pruneRecords(100, 10, NOW))(), 2);
      assert.deepEqual(batches(), [1]);
      assert.equal(await log.getRequest(twice.id), null, 'both versions went');
    });

    it('prunes the batches after one whose records are all dated ahead of the clock, and keeps that one until due', async () => {
      const ahead = record({ at: AHEAD });
      await batch(ahead);
      await batch(record({ at: 10 }), record({ at: 20 }));
      await batch(record({ at: 30 }), record({ at: 600 }));
      assert.equal(log.countRecordsBefore(100), 3);
      assert.equal(db.transaction(() => log.pruneRecords(100, 10, NOW))(), 3);
      assert.deepEqual(
        (await log.listRequests()).map((r) => r.at),
        [600, AHEAD],
      );
      assert.equal(db.transaction(() => log.pruneRecords(AHEAD + 1, 10, AHEAD))(), 2, 'once the clock reaches it');
    });

    it('filters without reading batches that cannot match, and still answers each record by its last version', async () => {
      const [i1, i2, i3] = [
        record({ status: 401, hook: 'gh' }),
        record({ status: 200 }),
        record({ status: 401, hook: 'gh' }),
      ];
      const closed = record({ status: 200 });
      await batch(closed, i2);
      // A newer batch whose ids span i2's without holding it, and one with the only later version of `closed`.
      await batch(i1, i3);
      await batch({ ...closed, status: 499, code: 'client_closed' });
      assert.deepEqual(
        (await log.listRequests({ status: 200 })).map((r) => r.id),
        [i2.id],
        'the 499 replaced the 200',
      );
      assert.deepEqual(
        (await log.listRequests({ status: 499 })).map((r) => r.id),
        [closed.id],
      );
      assert.deepEqual(
        (await log.listRequests({ hook: 'gh' })).map((r) => r.id),
        [i3.id, i1.id],
      );
      assert.deepEqual(
        (await log.listRequests({ hook: 'wake', status: 200 })).map((r) => r.id),
        [i2.id],
      );
      assert.deepEqual(await log.listRequests({ hook: 'wake', status: 401 }), []);
    });

    it('filters rows written before batches named their statuses and hooks by their text', async () => {
      const [gh, ok] = [record({ status: 401, hook: 'gh' }), record({ status: 200 })];
      await batch(gh);
      await batch(ok);
      // As the migration leaves them: JSON text, nothing in the new columns.
      for (const { seq, records } of db.prepare('SELECT seq, records FROM request_batches').all() as {
        seq: number;
        records: string | Buffer;
      }[]) {
        db.prepare('UPDATE request_batches SET records = ?, statuses = NULL, hooks = NULL WHERE seq = ?').run(
          unpackRecords(records),
          seq,
        );
      }
      assert.deepEqual(
        (await log.listRequests({ status: 401 })).map((r) => r.id),
        [gh.id],
      );
      assert.deepEqual(
        (await log.listRequests({ hook: 'wake' })).map((r) => r.id),
        [ok.id],
      );
      assert.deepEqual(await log.listRequests({ hook: 'gh', status: 200 }), []);
      assert.equal((await log.getRequest(ok.id))?.status, 200);
    });

    it('packs a batch from its threshold on, and reads it back whole', async () => {
      const made = Array.from({ length: 40 }, (_, i) => record({ status: i % 2 === 0 ? 200 : 404 }));
      await batch(...made);
      const stored = db.prepare('SELECT records FROM request_batches').pluck().get() as string | Buffer;
      assert.equal(Buffer.isBuffer(stored), true, 'a batch of 40 records is past both thresholds');
      assert.deepEqual(
        (await log.listRequests({ limit: 100 })).map((r) => r.id),
        made.map((r) => r.id).reverse(),
      );
      assert.deepEqual((await log.listRequests({ status: 404, limit: 100 })).length, 20);
      assert.deepEqual(await log.getRequest(made[7]!.id), made[7]);
    });

    it('rejects every record of a batch that could not be written; reads still answer', async () => {
      failWrites = true;
      const committed = [log.recordRequest(record()), log.recordRequest(record())];
      const outcomes = await Promise.allSettled(committed);
      assert.deepEqual(
        outcomes.map((o) => o.status),
        ['rejected', 'rejected'],
      );
      assert.deepEqual(await log.listRequests(), []);
    });

    it('makes a filtered listing of a long log on a read thread, and every other listing here', async () => {
      const asked: unknown[] = [];
      log = createSqliteRequestLog(
        { db, write: async <T>(fn: () => T) => db.transaction(fn)() },
        async (o) => {
          asked.push(o);
          return [];
        },
        3,
        packFromChars,
      );
      for (let i = 0; i < 3; i++) await batch(record({ status: 401 }));
      assert.equal((await log.listRequests({ status: 401 })).length, 3, 'three batches: here');
      await batch(record({ status: 401 }));
      assert.equal((await log.listRequests()).length, 4, 'no filter: here, it stops at the newest batches');
      assert.deepEqual(asked, []);
      assert.deepEqual(await log.listRequests({ status: 401, limit: 2 }), [], "the thread's answer");
      assert.deepEqual(await log.listRequests({ hook: 'wake' }), []);
      assert.deepEqual(asked, [{ status: 401, limit: 2 }, { hook: 'wake' }]);
    });

    it('bounds an id lookup to the hour after the id was made', () => {
      const id = createIds(() => 1_700_000_000_000).next();
      const end = recordWindowEnd(id);
      assert.ok(end !== null && id < end);
      assert.ok(createIds(() => 1_700_000_000_000 + 3_599_999).next() < end);
      assert.ok(createIds(() => 1_700_000_000_000 + 3_600_000).next() > end);
      assert.equal(recordWindowEnd('not-an-id'), null);
    });
  });
