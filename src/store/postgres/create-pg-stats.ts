import { toBudgetReport } from '../run-budgets.js';
import type { StoreStats } from '../store.js';
import { createPgBudgets } from './create-pg-budgets.js';
import { toQueueStats, toRunCounts, type QueueRow } from '../rows.js';
import type { RunState } from '../types.js';
import { nowSql, type PgContext } from './pg-context.js';

/**
 * Queue depths, run counts, size and the write probe for PostgreSQL. The depths read the partial
 * indexes on open work; the size is `pg_total_relation_size` (table, indexes and TOAST) of each
 * table in the store's schema.
 */
export function createPgStats(ctx: Pick<PgContext, 'pool' | 'checkWritable' | 'clockParam'>): StoreStats {
  const { pool } = ctx;
  const budgets = createPgBudgets();
  return {
    async readQueueStats() {
      const { rows } = await pool.query(`SELECT
        (SELECT count(*)::int FROM runs WHERE state = 'queued') AS queued_runs,
        (SELECT count(*)::int FROM runs WHERE state = 'running') AS running_runs,
        (SELECT count(*)::int FROM runs WHERE state = 'queued' AND held_reason IS NOT NULL) AS held_runs,
        (SELECT count(*)::int FROM system_events WHERE consumed_at IS NULL) AS pending_events,
        (SELECT count(*)::int FROM deliveries WHERE state = 'pending') AS pending_deliveries,
        (SELECT created_at FROM runs WHERE state = 'queued' ORDER BY seq LIMIT 1) AS oldest_run,
        (SELECT min(created_at) FROM system_events WHERE consumed_at IS NULL) AS oldest_event,
        (SELECT created_at FROM deliveries WHERE state = 'pending' ORDER BY seq LIMIT 1) AS oldest_delivery`);
      return toQueueStats(rows[0] as QueueRow);
    },
    async countRuns() {
      const { rows } = await pool.query('SELECT state, count(*)::int AS n FROM runs GROUP BY state');
      return toRunCounts(rows as Array<{ state: RunState; n: number }>);
    },
    async readStoreSize() {
      const { rows } = await pool.query(`SELECT c.relname AS name, pg_total_relation_size(c.oid) AS bytes
        FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p') ORDER BY c.relname`);
      const parts = (rows as Array<{ name: string; bytes: number }>).map((r) => ({
        name: r.name,
        bytes: Number(r.bytes),
      }));
      return { totalBytes: parts.reduce((sum, p) => sum + p.bytes, 0), parts };
    },
    async readBudgetUsage(b) {
      const { rows } = await pool.query(`SELECT ${nowSql(1)} AS now`, [ctx.clockParam()]);
      return toBudgetReport(await budgets.usage(pool, b, Number((rows[0] as { now: string }).now)));
    },
    async probeWrite() {
      ctx.checkWritable();
      await pool.query(
        'INSERT INTO write_probe (id, at) VALUES (1, hookgate_now_ms()) ON CONFLICT (id) DO UPDATE SET at = excluded.at',
      );
    },
  };
}
