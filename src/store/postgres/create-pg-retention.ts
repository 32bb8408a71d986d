import type { RetentionStore } from '../store.js';
import type { PruneCounts } from '../maintenance-types.js';
import { nowOnceSql, nowSql, type PgContext } from './pg-context.js';
import { createPassBounds, OUT_OF_ORDER_AFTER_MS } from '../seq-bound.js';
import { pgSeqBound } from './pg-seq-bound.js';
import { PRUNED_THROUGH_MARK } from '../log-rows.js';

/** Which rows each kind may lose (`$1` is its cut-off): only finished work. */
const PRUNABLE = {
  events: 'FROM system_events WHERE consumed_at IS NOT NULL AND consumed_at < $1::bigint',
  runs: "FROM runs WHERE state IN ('succeeded', 'failed', 'timed_out') AND finished_at < $1::bigint",
  deliveries: "FROM deliveries WHERE state IN ('sent', 'failed', 'skipped') AND updated_at < $1::bigint",
  transcript: 'FROM transcript WHERE created_at < $1::bigint',
  // Idle past the transcript's window, so its transcript is gone too; main sessions stay.
  sessions: "FROM sessions WHERE updated_at < $1::bigint AND last_channel IS NULL AND key NOT LIKE 'agent:%:main'",
} as const;

/**
 * A batch: oldest first, among the rows created before the cut-off (`$3`, see seq-bound.ts),
 * skipping rows another replica's pruner holds.
 */
const batch = (table: string, where: string): string =>
  `DELETE FROM ${table} WHERE seq IN (SELECT seq ${where} AND seq <= $3::bigint ORDER BY seq LIMIT $2::int FOR UPDATE SKIP LOCKED)`;

/**
 * Ended deliveries with their attempts, in one statement: the attempts go with the deliveries this
 * batch actually deletes. A delivery being requeued (its UPDATE not yet committed) is locked, so it is
 * skipped, and its attempts stay with it.
 */
const DELIVERIES = `WITH gone AS (${batch('deliveries', PRUNABLE.deliveries)} RETURNING id),
  attempts AS (DELETE FROM delivery_attempts WHERE delivery_id IN (SELECT id FROM gone))
  SELECT count(*) AS n FROM gone`;

/**
 * The event log goes oldest first, every row up to the bound, and the mark of how far it went moves
 * in the same statement, so `pruned through` is exact (a reader behind it has missed something).
 */
const EVENT_LOG = `WITH gone AS (DELETE FROM event_log WHERE seq IN (SELECT seq FROM event_log WHERE seq <= $2::bigint
    ORDER BY seq LIMIT $1::int FOR UPDATE SKIP LOCKED) RETURNING seq),
  mark AS (INSERT INTO store_marks (name, value) SELECT $3, max(seq) FROM gone HAVING count(*) > 0
    ON CONFLICT (name) DO UPDATE SET value = greatest(store_marks.value, excluded.value))
  SELECT count(*) AS n FROM gone`;

export function createPgRetention(ctx: PgContext): RetentionStore {
  /** The store's clock (the database's, as for leases), by which a row is dated ahead or not (see seq-bound.ts). */
  const readNow = async (): Promise<number> =>
    Number(((await ctx.pool.query(`SELECT ${nowSql(1)} AS now`, [ctx.clockParam()])).rows[0] as { now: string }).now);
  const boundsOf = createPassBounds((table) => (cutoff, now) => pgSeqBound(ctx.pool, table, cutoff, now), readNow);
  return {
    async prune(c, limit) {
      const b = await boundsOf(c);
      return ctx.tx(async (client): Promise<PruneCounts> => {
        const run = async (sql: string, values: unknown[]): Promise<number> =>
          (await client.query(sql, values)).rowCount ?? 0;
        return {
          events: await run(batch('system_events', PRUNABLE.events), [c.events, limit, b.events]),
          runs: await run(batch('runs', PRUNABLE.runs), [c.runs, limit, b.runs]),
          deliveries: Number(
            ((await client.query(DELIVERIES, [c.deliveries, limit, b.deliveries])).rows[0] as { n: string }).n,
          ),
          transcript: await run(batch('transcript', PRUNABLE.transcript), [c.transcript, limit, b.transcript]),
          // The oldest `limit` records, of which those past the cut-off: a batch reads the table's head.
          // Records dated ahead of the clock are passed over (see seq-bound.ts): at the head, they would
          // hold back every record after them until their own time came.
          requests: await run(
            `DELETE FROM requests WHERE seq IN (SELECT seq FROM (SELECT seq, at FROM requests WHERE at <= ${nowOnceSql(3)} + ${OUT_OF_ORDER_AFTER_MS}
              ORDER BY seq LIMIT $2::int FOR UPDATE SKIP LOCKED) o WHERE o.at < $1::bigint)`,
            [c.requests, limit, ctx.clockParam()],
          ),
          eventLog: Number(
            ((await client.query(EVENT_LOG, [limit, b.eventLog, PRUNED_THROUGH_MARK])).rows[0] as { n: string }).n,
          ),
          idempotencyKeys: await run(
            // In expiry order, so the index is read even when no key has expired (the planner cannot
            // tell from a clock it has not read).
            `DELETE FROM idempotency_keys WHERE (hook, key) IN (SELECT hook, key FROM idempotency_keys WHERE expires_at <= ${nowOnceSql(2)}
              ORDER BY expires_at LIMIT $1::int FOR UPDATE SKIP LOCKED)`,
            [limit, ctx.clockParam()],
          ),
          sessions: await run(
            `DELETE FROM sessions WHERE key IN (SELECT key ${PRUNABLE.sessions} LIMIT $2::int FOR UPDATE SKIP LOCKED)`,
            [c.transcript, limit],
          ),
        };
      });
    },
    async countPrunable(c) {
      const count = async (where: string, cutoff: number): Promise<number> =>
        Number(((await ctx.pool.query(`SELECT count(*) AS n ${where}`, [cutoff])).rows[0] as { n: number }).n);
      const keys = await ctx.pool.query(
        `SELECT count(*) AS n FROM idempotency_keys WHERE expires_at <= ${nowOnceSql(1)}`,
        [ctx.clockParam()],
      );
      return {
        events: await count(PRUNABLE.events, c.events),
        runs: await count(PRUNABLE.runs, c.runs),
        deliveries: await count(PRUNABLE.deliveries, c.deliveries),
        transcript: await count(PRUNABLE.transcript, c.transcript),
        requests: await count('FROM requests WHERE at < $1::bigint', c.requests),
        eventLog: await count('FROM event_log WHERE created_at < $1::bigint', c.eventLog),
        idempotencyKeys: Number((keys.rows[0] as { n: number }).n),
        sessions: await count(PRUNABLE.sessions, c.transcript),
      };
    },
  };
}
