import { statSync } from 'node:fs';
import { toBudgetReport } from '../run-budgets.js';
import type { StoreStats } from '../store.js';
import { createSqliteBudgets } from './create-sqlite-budgets.js';
import { toQueueStats, toRunCounts } from '../rows.js';
import type { RunState } from '../types.js';
import type { FloodReads } from './create-flood-reads.js';
import { createQueueReader } from './read-queue.js';
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
export function createSqliteStats(
  { db, write, now }: Pick<SqliteContext, 'db' | 'write' | 'now'>,
  path: string,
  floodReads: FloodReads,
): StoreStats {
  const readQueue = createQueueReader(db);
  const byState = db.prepare('SELECT state, count(*) AS n FROM runs GROUP BY state');
  const probe = db.prepare(
    'INSERT INTO write_probe (id, at) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET at = excluded.at',
  );
  const budgets = createSqliteBudgets(db);
  return {
    async readQueueStats() {
      // Past the flood threshold on a thread of its own: 0.2 s and more over a million events.
      return toQueueStats(await floodReads({ kind: 'queue' }, readQueue));
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
    async readBudgetUsage(b) {
      return toBudgetReport(budgets.usage(b, now()));
    },
    async probeWrite() {
      // Through the group commit, like every real write: it fails the way they would.
      await write(() => probe.run(now()));
    },
  };
}
