import type pg from 'pg';
import { waitForWriters } from './wait-for-writers.js';
import { toEvent, type EventRow } from '../rows.js';
import type { StoreReader } from '../store.js';
import { backlogQuery, type PgContext } from './pg-context.js';
import { HIGH, HOOK, SHAPE } from './pg-event-kind.js';

const PENDING = 'FROM system_events WHERE session_key = $1 AND consumed_at IS NULL AND seq <= $2';
/** How long a digest waits for the writes in flight when it was taken (see `settle`). */
const SETTLE_MS = 2000;
/** The wait one grouping read of a digest may take beside the pool's query timeout: three times what it took here under load. */
const GROUP_TIMEOUT_MS_PER_EVENT = 0.01;

export function createPgDigest({
  pool,
  queryTimeoutMs,
}: Pick<PgContext, 'pool' | 'queryTimeoutMs'>): Pick<StoreReader, 'digestPending'> {
  const q = async <T>(query: string | pg.QueryConfig, values: unknown[] = []): Promise<T[]> =>
    (await (typeof query === 'string' ? pool.query(query, values) : pool.query(query))).rows as T[];
  /**
   * Waits until every transaction that was writing when the digest's last event was read has
   * ended. An event's `seq` is drawn when it is inserted, not when it commits: another replica's
   * commit still in flight may hold events numbered below the digest's last one, invisible to the
   * count. The turn consumes every pending event up to that number and is refused when there are
   * more than it counted, so without this wait a fleet under load discarded a paid model turn, and
   * the next one raced the same way. A transaction still writing after `SETTLE_MS` (not one of
   * ours) is not waited for.
   */
  const settle = async (): Promise<void> => {
    const [snapshot] = await q<{ xmax: string }>('SELECT pg_snapshot_xmax(pg_current_snapshot())::text AS xmax', []);
    await waitForWriters(pool, snapshot!.xmax, SETTLE_MS);
  };
  return {
    async digestPending(sessionKey, o) {
      const [last] = await q<{ seq: number | null }>(
        'SELECT max(seq) AS seq FROM system_events WHERE session_key = $1 AND consumed_at IS NULL',
        [sessionKey],
      );
      if (last?.seq == null) return null;
      await settle();
      const p = [sessionKey, last.seq];
      const [through] = await q<{ id: string }>('SELECT id FROM system_events WHERE seq = $1', [last.seq]);
      const [total] = await q<{ n: number }>(`SELECT count(*) AS n ${PENDING}`, p);
      // Grouping a backlog of millions takes longer than the pool's query timeout allows one query.
      const grouping = (text: string, values: unknown[]): pg.QueryConfig =>
        backlogQuery({ queryTimeoutMs }, text, values, Number(total!.n), GROUP_TIMEOUT_MS_PER_EVENT);
      const byHook = await q<{ hook: string; n: number; high: number }>(
        grouping(
          `SELECT ${HOOK} AS hook, count(*) AS n, count(*) FILTER (WHERE ${HIGH}) AS high ${PENDING}
            GROUP BY 1 ORDER BY n DESC, hook`,
          p,
        ),
      );
      const highTotal = byHook.reduce((n, h) => n + Number(h.high), 0);
      // Ranked as the SQLite reader ranks them (read-digest.ts): each hook's largest kind ahead of
      // every other kind, larger (then newer) first; the first max(groups, min(hooks, $4)) shown.
      const groups = await q<{ hook: string | null; shape: string; seq: number; n: number; kinds: number }>(
        grouping(
          `WITH g AS (
            SELECT ${HOOK} AS hook, ${SHAPE} AS shape, max(seq) AS seq, count(*) AS n
            ${PENDING} AND NOT ${HIGH} GROUP BY 1, 2
          ), r AS (
            SELECT g.*, row_number() OVER (PARTITION BY hook ORDER BY n DESC, seq DESC) = 1 AS first FROM g
          ), o AS (
            SELECT r.*, row_number() OVER (ORDER BY first DESC, n DESC, seq DESC) AS rank,
              count(*) FILTER (WHERE first) OVER () AS hooks, count(*) OVER () AS kinds
            FROM r
          )
          SELECT hook, shape, seq, n, kinds FROM o WHERE rank <= greatest($3::int, least(hooks, $4::int)) ORDER BY rank`,
          [...p, o.groups, o.hooks],
        ),
      );
      // Every shown row carries the count of kinds; with none shown (no place for any), it is read apart.
      const kinds =
        groups.length > 0
          ? Number(groups[0]!.kinds)
          : Number(total!.n) === highTotal
            ? 0
            : Number(
                (
                  await q<{ n: number }>(
                    grouping(`SELECT count(DISTINCT (${HOOK}, ${SHAPE})) AS n ${PENDING} AND NOT ${HIGH}`, p),
                  )
                )[0]!.n,
              );
      const samples = await q<EventRow & { seq: number }>('SELECT * FROM system_events WHERE seq = ANY($1::bigint[])', [
        groups.map((g) => g.seq),
      ]);
      const high = await q<EventRow>(`SELECT * ${PENDING} AND ${HIGH} ORDER BY seq LIMIT $3`, [...p, o.high]);
      const newest = await q<EventRow>(`SELECT * ${PENDING} AND NOT ${HIGH} ORDER BY seq DESC LIMIT $3`, [
        ...p,
        o.newest,
      ]);
      return {
        total: Number(total!.n),
        throughId: through!.id,
        byHook: byHook.map((r) => ({ hook: r.hook, count: Number(r.n) })),
        groups: groups.map((g) => ({
          sample: toEvent(samples.find((s) => Number(s.seq) === Number(g.seq))!),
          count: Number(g.n),
          kind: { hook: g.hook, shape: g.shape },
        })),
        kinds,
        high: high.map(toEvent),
        highTotal,
        newest: newest.map(toEvent),
      };
    },
  };
}
