import type { LockoutStore } from '../store.js';
import { nowOnceSql, nowSql, type PgContext } from './pg-context.js';

/** Stale rows a failure deletes at most: far more than the one row it may add. */
const PRUNE_BATCH = 100;

/** The failures of the row being updated that are still inside the window ($2 ms before now). */
const KEPT = 'FROM unnest(a.failures) AS f WHERE f > excluded.updated_at - $2::bigint';

/**
 * One statement per failure, so a brute-forcer hitting every replica costs one round trip each:
 * the upsert locks the client's row (replicas counting at once queue on it, none loses a count),
 * prunes its failures to the window, locks the client out at `maxFailures`, and announces a new
 * lockout in the same commit. Rows neither locked nor touched within the window are deleted on
 * the way (as SQLite does), so the table holds only clients that failed lately: up to
 * `PRUNE_BATCH` a failure, the oldest first, found by the `auth_failures_expiry` index. Looking
 * for them among every row made each failure of an attack from many addresses cost 12.9 ms of the
 * database with 100,000 of them in the window, measured.
 */
const RECORD = `
WITH n AS (SELECT ${nowSql(5)} AS now),
pruned AS (
  DELETE FROM auth_failures WHERE client IN (
    SELECT p.client FROM auth_failures p
    WHERE greatest(p.locked_until, p.updated_at) <= (SELECT now FROM n) - $2::bigint AND p.client <> $1
    ORDER BY greatest(p.locked_until, p.updated_at) LIMIT ${PRUNE_BATCH} FOR UPDATE OF p SKIP LOCKED)),
up AS (
  INSERT INTO auth_failures AS a (client, failures, locked_until, updated_at)
  SELECT $1, CASE WHEN 1 >= $3::int THEN '{}'::bigint[] ELSE ARRAY[n.now] END,
    CASE WHEN 1 >= $3::int THEN n.now + $4::bigint ELSE 0 END, n.now FROM n
  ON CONFLICT (client) DO UPDATE SET
    failures = CASE WHEN a.locked_until > excluded.updated_at THEN a.failures
      WHEN (SELECT count(*) ${KEPT}) + 1 >= $3::int THEN '{}'::bigint[]
      ELSE ARRAY(SELECT f ${KEPT} ORDER BY f) || excluded.updated_at END,
    locked_until = CASE WHEN a.locked_until > excluded.updated_at THEN a.locked_until
      WHEN (SELECT count(*) ${KEPT}) + 1 >= $3::int THEN excluded.updated_at + $4::bigint ELSE 0 END,
    updated_at = CASE WHEN a.locked_until > excluded.updated_at THEN a.updated_at ELSE excluded.updated_at END
  RETURNING a.locked_until, a.updated_at, a.failures)
SELECT up.locked_until,
  CASE WHEN up.locked_until > n.now AND up.updated_at = n.now AND cardinality(up.failures) = 0
    THEN pg_notify($6, 'lockout:' || up.locked_until || ':' || $1) END
FROM up, n`;

export function createPgLockouts(ctx: PgContext): LockoutStore {
  return {
    async recordAuthFailure({ client, windowMs, maxFailures, lockoutMs }) {
      ctx.checkWritable();
      const { rows } = await ctx.pool.query(RECORD, [
        client,
        windowMs,
        maxFailures,
        lockoutMs,
        ctx.clockParam(),
        ctx.channel,
      ]);
      const lockedUntil = Number((rows[0] as { locked_until: number }).locked_until);
      return lockedUntil > 0 ? lockedUntil : null;
    },
    async listLockouts(limit) {
      const { rows } = await ctx.pool.query(
        // `locked_until > 0` names the partial index of locked clients: every replica reads them every second.
        `SELECT client, locked_until FROM auth_failures WHERE locked_until > 0 AND locked_until > ${nowOnceSql(1)}
          ORDER BY locked_until DESC LIMIT $2`,
        [ctx.clockParam(), limit],
      );
      return (rows as Array<{ client: string; locked_until: number }>).map((r) => ({
        client: r.client,
        lockedUntil: Number(r.locked_until),
      }));
    },
  };
}
