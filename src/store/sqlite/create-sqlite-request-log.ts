import type { RequestLog } from '../store.js';
import type { ListRequestsOptions, RequestRecord } from '../request-record.js';
import { OUT_OF_ORDER_AFTER_MS } from '../seq-bound.js';
import {
  batchRow,
  PACK_FROM_CHARS,
  packRecords,
  packRecordsLater,
  readRequestBatch,
  recordWindowEnd,
  RequestBatchBuilder,
  type EncodedBatch,
  type NewRequestBatch,
  type RequestBatchRow,
} from './request-batch.js';
import { createRequestsReader } from './read-requests.js';
import type { SqliteContext } from './sqlite-context.js';

/** Records wait at most this long for their batch's commit. */
const FLUSH_MS = 100;
/** A batch is committed at once when it holds this many records… */
const MAX_RECORDS = 512;
/** …or this many characters (payloads kept with `gateway.recordPayloads`). */
const MAX_CHARS = 1024 * 1024;

/**
 * Past this many batches, a filtered listing is made on a read thread: one that matches little reads
 * every batch's text, 6–7 µs a batch (a million records in batches of 20: 0.33 s), and below it the
 * thread's start would cost more than the read.
 */
export const FILTERED_ON_THREAD_ABOVE = 5000;

/** The SQLite request log, with what the store's retention and shutdown need of it. */
export interface SqliteRequestLog extends RequestLog {
  /** Queues the records not yet written into the next group commit (at shutdown, before its flush). */
  flushPending(): void;
  /**
   * Deletes up to `limit` of the oldest records from before `cutoff`, passing over batches dated ahead
   * of `now` (see seq-bound.ts); inside a write.
   */
  pruneRecords(cutoff: number, limit: number, now: number): number;
  /** How many records are from before `cutoff`. */
  countRecordsBefore(cutoff: number): number;
}

/** A batch on its way to the database, with the promise its records' writers wait on. */
interface Outgoing {
  batch: EncodedBatch;
  /** As they will be stored; `null` while they are being compressed. */
  records: string | Buffer | null;
  joined: Joined;
}

interface Joined {
  promise: Promise<void>;
  resolve: () => void;
  reject: (error: unknown) => void;
}

/**
 * The request log on SQLite. Every hook request writes a record, so a row per record would be a
 * B-tree insert per request in the ingress's commit; instead records gather in memory and are
 * written as one row per batch (a JSON array), at most `FLUSH_MS` later, in whatever group commit
 * is next. A large batch is compressed on libuv's thread pool first, off the thread serving
 * requests; batches are written in the order they were gathered all the same. A crash can lose
 * the last moment's records, never the actions they describe. Reads write what is gathered first,
 * so they see every record made before them.
 */
export function createSqliteRequestLog(
  { db, write }: Pick<SqliteContext, 'db' | 'write'>,
  /** Makes a filtered listing on a read thread (read-requests.ts); without it, every listing is made here. */
  onThread?: (o: ListRequestsOptions) => Promise<RequestRecord[]>,
  onThreadAbove = FILTERED_ON_THREAD_ABOVE,
  /** Batches whose JSON is at least this long are stored compressed (request-batch.ts; tests pass 0). */
  packFromChars = PACK_FROM_CHARS,
  /** Compresses a batch off this thread and calls back (request-batch.ts; tests hold the call back). */
  packLater: typeof packRecordsLater = packRecordsLater,
): SqliteRequestLog {
  const insert = db.prepare(
    `INSERT INTO request_batches (min_id, max_id, upto_id, min_at, max_at, count, records, statuses, hooks)
      VALUES (@min_id, @max_id, @upto_id, @min_at, @max_at, @count, @records, @statuses, @hooks)`,
  );
  const lastUpto = db.prepare('SELECT upto_id FROM request_batches ORDER BY seq DESC LIMIT 1').pluck();
  // Batches that may hold an id: those written from its arrival until its record window closed.
  const holding = db
    .prepare(
      'SELECT records FROM request_batches WHERE max_id >= @id AND max_id < @end AND min_id <= @id ORDER BY seq DESC',
    )
    .pluck();
  // A batch whose records are all dated ahead of the clock is passed over: taken as the oldest, it would
  // end the walk, and keep every batch after it, until its own time came.
  const oldestFrom = db.prepare('SELECT * FROM request_batches WHERE seq > ? AND min_at <= ? ORDER BY seq LIMIT 1');
  const remove = db.prepare('DELETE FROM request_batches WHERE seq = ?');
  const rewrite = db.prepare(
    `UPDATE request_batches SET min_id = @min_id, max_id = @max_id, min_at = @min_at, max_at = @max_at, count = @count,
      records = @records, statuses = @statuses, hooks = @hooks WHERE seq = @seq`,
  );
  const countWhole = db.prepare('SELECT coalesce(sum(count), 0) FROM request_batches WHERE max_at < ?').pluck();
  const straddling = db
    .prepare('SELECT records FROM request_batches WHERE min_at < @cutoff AND max_at >= @cutoff')
    .pluck();

  const newBatch = (): RequestBatchBuilder => new RequestBatchBuilder(packFromChars);
  let pending = newBatch();
  let joined: Joined | null = null;
  let timer: NodeJS.Timeout | undefined;
  let upto: string | null = null;
  /** Batches taken from `pending`, oldest first, until they are queued into a group commit. */
  const outgoing: Outgoing[] = [];
  /** The promise of the batch taken last: settled once it is committed. */
  let last: Promise<void> = Promise.resolve();

  const writeBatch = (batch: NewRequestBatch): void => {
    upto ??= (lastUpto.get() as string | undefined) ?? '';
    const next = batch.max_id > upto ? batch.max_id : upto;
    insert.run({ ...batch, upto_id: next });
    upto = next;
  };

  /** Queues into the next group commit, in order, the batches at the head of the line whose records are ready. */
  const queueReady = (): void => {
    for (let head = outgoing[0]; head !== undefined && head.records !== null; head = outgoing[0]) {
      outgoing.shift();
      const row = batchRow(head.batch, head.records);
      write(() => writeBatch(row)).then(head.joined.resolve, head.joined.reject);
    }
  };

  /** Takes what is gathered towards the next group commit; resolves once it (and every batch before it) is committed. */
  const flush = (): Promise<void> => {
    clearTimeout(timer);
    timer = undefined;
    const waiting = joined;
    if (waiting === null) return last;
    const gathered = pending;
    pending = newBatch();
    joined = null;
    last = waiting.promise;
    // Not null: `joined` is set by the first record added.
    const batch = gathered.encode()!;
    const entry: Outgoing = { batch, records: gathered.packs(batch) ? null : batch.json, joined: waiting };
    outgoing.push(entry);
    if (entry.records === null) {
      packLater(batch.json, (records) => {
        if (entry.records !== null) return; // packed at shutdown meanwhile
        entry.records = records;
        queueReady();
      });
    }
    queueReady();
    return waiting.promise;
  };

  /** Before a read: a batch that cannot be written is the recorder's to report, not the reader's. */
  const flushQuietly = (): Promise<void> => flush().catch(() => undefined);

  const readHere = createRequestsReader(db);
  /** Batches in the log, give or take those pruned from its middle (none are). */
  const span = db.prepare('SELECT coalesce(max(seq) - min(seq) + 1, 0) FROM request_batches').pluck();
  const list: RequestLog['listRequests'] = async (o) => {
    await flushQuietly();
    // A filter may match nothing and read every batch: over a long log, on a read thread.
    const filtered = o?.status !== undefined || o?.hook !== undefined;
    if (filtered && onThread !== undefined && (span.get() as number) > onThreadAbove) return onThread(o);
    return readHere(o);
  };

  return {
    recordRequest(r) {
      pending.add(r);
      if (joined === null) {
        let resolve!: () => void;
        let reject!: (error: unknown) => void;
        const promise = new Promise<void>((res, rej) => {
          resolve = res;
          reject = rej;
        });
        joined = { promise, resolve, reject };
        // Not unref'd: a caller may be waiting for this batch (shutdown flushes it at once).
        timer = setTimeout(flush, FLUSH_MS);
      }
      const batch = joined.promise;
      if (pending.count >= MAX_RECORDS || pending.chars >= MAX_CHARS) void flush();
      return batch;
    },
    listRequests: list,
    async getRequest(id) {
      await flushQuietly();
      for (const records of holding.all({ id, end: recordWindowEnd(id) ?? '\uffff' }) as (string | Buffer)[]) {
        const found = readRequestBatch(records).filter((r) => r.id === id);
        if (found.length > 0) return found[found.length - 1]!;
      }
      return null;
    },
    flushPending() {
      void flushQuietly();
      // The store closes after its next flush: batches still being compressed are packed here.
      for (const entry of outgoing) entry.records ??= packRecords(entry.batch.json);
      queueReady();
    },
    pruneRecords(cutoff, limit, now) {
      let removed = 0;
      let after = 0;
      while (removed < limit) {
        const row = oldestFrom.get(after, now + OUT_OF_ORDER_AFTER_MS) as RequestBatchRow | undefined;
        if (row === undefined || row.min_at >= cutoff) break;
        after = row.seq;
        if (row.max_at < cutoff && row.count <= limit - removed) {
          remove.run(row.seq);
          removed += row.count;
          continue;
        }
        // Part of this batch goes: its oldest records from before the cut-off, as many as the limit allows.
        // A stable sort: of two versions of a record (in rows written before a batch kept one), the later
        // stays after the earlier, and both go or stay together, counted once.
        const records = readRequestBatch(row.records).sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
        const kept = newBatch();
        let gone: string | null = null;
        for (const r of records) {
          if (r.id === gone) continue;
          if (r.at < cutoff && removed < limit) {
            gone = r.id;
            removed++;
          } else {
            kept.add(r);
          }
        }
        const batch = kept.build();
        if (batch === null) remove.run(row.seq);
        else rewrite.run({ ...batch, seq: row.seq });
      }
      return removed;
    },
    countRecordsBefore(cutoff) {
      let n = countWhole.get(cutoff) as number;
      for (const records of straddling.all({ cutoff }) as (string | Buffer)[]) {
        n += new Set(
          readRequestBatch(records)
            .filter((r) => r.at < cutoff)
            .map((r) => r.id),
        ).size;
      }
      return n;
    },
  };
}
