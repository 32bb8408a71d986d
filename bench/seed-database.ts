/**
 * Fills a gateway's SQLite database (schema already created by the gateway itself) with what a
 * month of wakes leaves behind under the default retention: a consumed `system_events` row per
 * wake, and the request record of each wake of the last 7 days (older records are pruned) in
 * `request_batches` rows of 200 (what 100 ms gathers at 2,000 req/s), in time order, in one
 * transaction. The oldest `prunable` wakes lie past the 30-day window of
 * events, so the gateway's pruner has a backlog to work off while it serves.
 */
import Database from 'better-sqlite3';
import { createIds } from '../src/common/ids.js';
import { RequestBatchBuilder } from '../src/store/sqlite/request-batch.js';
import { encodeSource } from '../src/store/action-source.js';

const DAY = 86_400_000;
/** The default `store.retention.requests`. */
const REQUESTS_KEPT_MS = 7 * DAY;
/** Records per `request_batches` row. */
const BATCH = 200;
const SOURCE = encodeSource({ hook: 'wake', external: true, allowUnsafeExternalContent: false });

export interface SeedOptions {
  rows: number;
  /** How many of `rows` (the oldest) are past the retention window. */
  prunable: number;
  /** The wall clock the gateway will run at, ms since the epoch. */
  now: number;
}

/** Inserts the rows; returns how many request records came with them and how long it took, ms. */
export function seedDatabase(path: string, o: SeedOptions): { requests: number; ms: number } {
  const t0 = performance.now();
  const db = new Database(path, { fileMustExist: true });
  try {
    db.pragma('journal_mode = WAL');
    const addEvent = db.prepare(
      `INSERT INTO system_events (id, agent_id, session_key, text, mode, source, created_at, consumed_at, consumed_by)
        VALUES (?, 'main', 'agent:main:main', ?, 'next-heartbeat', ?, ?, ?, ?)`,
    );
    const addBatch = db.prepare(
      `INSERT INTO request_batches (min_id, max_id, upto_id, min_at, max_at, count, records, statuses, hooks)
        VALUES (@min_id, @max_id, @max_id, @min_at, @max_at, @count, @records, @statuses, @hooks)`,
    );
    // Past the window: 40 to 31 days old; inside it: 29 days old up to a minute ago.
    const oldFrom = o.now - 40 * DAY;
    const oldStep = (9 * DAY) / Math.max(1, o.prunable);
    const recentFrom = o.now - 29 * DAY;
    const recentStep = (29 * DAY - 60_000) / Math.max(1, o.rows - o.prunable);
    let at = 0;
    const ids = createIds(() => at);
    let turn = '';
    let requests = 0;
    let batch = new RequestBatchBuilder();
    const writeBatch = (): void => {
      const row = batch.build();
      // Ids grow with time, so each batch's own `max_id` is the largest so far.
      if (row !== null) addBatch.run(row);
      batch = new RequestBatchBuilder();
    };
    db.transaction(() => {
      for (let i = 0; i < o.rows; i++) {
        at = Math.floor(i < o.prunable ? oldFrom + i * oldStep : recentFrom + (i - o.prunable) * recentStep);
        const eventId = ids.next();
        // A heartbeat turn a minute later consumes the wakes that arrived before it.
        if (i % 100 === 0) turn = ids.next();
        addEvent.run(
          eventId,
          `seed wake ${i}: New email from alerts@example.com about order ${i}`,
          SOURCE,
          at,
          at + 60_000,
          turn,
        );
        if (at < o.now - REQUESTS_KEPT_MS) continue;
        batch.add({
          id: ids.next(),
          at,
          method: 'POST',
          path: '/hooks/wake',
          hook: 'wake',
          client: '127.0.0.1',
          status: 200,
          code: null,
          reason: null,
          durationMs: 1 + (i % 7) / 10,
          eventIds: [eventId],
          runIds: [],
          payload: null,
          headers: null,
        });
        requests++;
        if (batch.count === BATCH) writeBatch();
      }
      writeBatch();
    })();
    db.pragma('wal_checkpoint(TRUNCATE)');
    return { requests, ms: performance.now() - t0 };
  } finally {
    db.close();
  }
}
