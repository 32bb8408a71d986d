import { statSync } from 'node:fs';
import type { StoreStats } from '../store.js';
import { toQueueStats, toRunCounts, type QueueRow } from '../rows.js';
import type { RunState } from '../types.js';
import { PENDING } from './consumed-marks.js';
import type { SqliteContext } from './sqlite-context.js';


/** A file's size, 0 when it does not exist (no WAL between checkpoints and closes). */
function sizeOf(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

/**
 * Queue depths, run counts, size and the write probe for SQLite. The depths read the partial
 * indexes on open work, so a scrape costs the size of the queues, not of the history.
 */
/** SQL: `agg` over pending events; the marks are looked up event by event only while there are any. */
const whileMarked = (agg: string): string => `CASE WHEN EXISTS (SELECT 1 FROM consumed_marks)
    THEN (SELECT ${agg} FROM system_events e WHERE ${PENDING('e')})
    ELSE (SELECT ${agg} FROM system_events e WHERE e.consumed_at IS NULL) END`;

export function createSqliteStats({ db, write, now }: Pick<SqliteContext, 'db' | 'write' | 'now'>, path: string): StoreStats {
  const queue = db.prepare(`SELECT
    (SELECT count(*) FROM runs WHERE state = 'queued') AS queued_runs,
    (SELECT count(*) FROM runs WHERE state = 'running') AS running_runs,
    (SELECT count(*) FROM runs WHERE state = 'queued' AND held_reason IS NOT NULL) AS held_runs,
    ${whileMarked('count(*)')} AS pending_events,
    (SELECT count(*) FROM deliveries WHERE state = 'pending') AS pending_deliveries,
    (SELECT created_at FROM runs WHERE state = 'queued' ORDER BY seq LIMIT 1) AS oldest_run,
    ${whileMarked('min(e.created_at)')} AS oldest_event,
    (SELECT created_at FROM deliveries WHERE state = 'pending' ORDER BY seq LIMIT 1) AS oldest_delivery`);
  const byState = db.prepare('SELECT state, count(*) AS n FROM runs GROUP BY state');
  const probe = db.prepare('INSERT INTO write_probe (id, at) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET at = excluded.at');
  return {
    async readQueueStats() {
      return toQueueStats(queue.get() as QueueRow);
    },
    async countRuns() {
      return toRunCounts(byState.all() as Array<{ state: RunState; n: number }>);
    },
    async readStoreSize() {
      const parts = [
        { name: 'database', bytes: sizeOf(path) },
        { name: 'wal', bytes: sizeOf(`${path}-wal`) },
      ];
      return { totalBytes: parts.reduce((sum, p) => sum + p.bytes, 0), parts };
    },
    async probeWrite() {
      // Through the group commit, like every real write: it fails the way they would.
      await write(() => probe.run(now()));
    },
  };
}
