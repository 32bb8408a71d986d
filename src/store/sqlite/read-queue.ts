import type Database from 'better-sqlite3';
import type { QueueRow } from '../rows.js';
import { PENDING } from './consumed-marks-sql.js';

/** SQL: `agg` over pending events; the marks are looked up event by event only while there are any. */
const whileMarked = (agg: string): string => `CASE WHEN EXISTS (SELECT 1 FROM consumed_marks)
    THEN (SELECT ${agg} FROM system_events e WHERE ${PENDING('e')})
    ELSE (SELECT ${agg} FROM system_events e WHERE e.consumed_at IS NULL) END`;

/**
 * Open runs, as the partial index on them (`runs_open`) is defined: SQLite uses a partial index only
 * when the query's terms name its condition, so without this every read of queued or running runs
 * scanned the whole history (20 ms over 200,000 runs, three times a scrape).
 */
export const OPEN = "state IN ('queued', 'running')";

/**
 * Queue depths and the oldest waiting items. The depths read the partial indexes on open work, so
 * a read costs the size of the queues, not of the history: about 0.2 s over a million pending
 * events, which is why the store reads them on a thread of its own past `ON_THREAD_ABOVE` (create-flood-reads.ts).
 */
export function createQueueReader(db: Database.Database): () => QueueRow {
  const queue = db.prepare(`SELECT
    (SELECT count(*) FROM runs WHERE ${OPEN} AND state = 'queued') AS queued_runs,
    (SELECT count(*) FROM runs WHERE ${OPEN} AND state = 'running') AS running_runs,
    (SELECT count(*) FROM runs WHERE state = 'queued' AND held_reason IS NOT NULL) AS held_runs,
    ${whileMarked('count(*)')} AS pending_events,
    (SELECT count(*) FROM deliveries WHERE state = 'pending') AS pending_deliveries,
    (SELECT created_at FROM runs WHERE ${OPEN} AND state = 'queued' ORDER BY seq LIMIT 1) AS oldest_run,
    ${whileMarked('min(e.created_at)')} AS oldest_event,
    (SELECT created_at FROM deliveries WHERE state = 'pending' ORDER BY seq LIMIT 1) AS oldest_delivery`);
  return () => queue.get() as QueueRow;
}
