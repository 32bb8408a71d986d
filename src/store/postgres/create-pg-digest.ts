import type pg from 'pg';
import { waitForWriters } from './wait-for-writers.js';
import { toEvent, type EventRow } from '../rows.js';
import type { StoreReader } from '../store.js';
import { backlogQuery, type PgContext } from './pg-context.js';

/** Events are alike when they come from one hook and open with the same words, numbers aside. */
const SHAPE_CHARS = 40;
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
      const byHook = await q<{ hook: string; n: number }>(
        grouping(
          `SELECT source::jsonb ->> 'hook' AS hook, count(*) AS n ${PENDING} GROUP BY 1 ORDER BY n DESC, hook`,
          p,
        ),
      );
      const groups = await q<{ seq: number; n: number }>(
        grouping(
          `SELECT max(seq) AS seq, count(*) AS n ${PENDING} GROUP BY source::jsonb ->> 'hook', left(translate(text, '0123456789', ''), ${SHAPE_CHARS})
          ORDER BY n DESC, seq DESC LIMIT $3`,
          [...p, o.groups],
        ),
      );
      const samples = await q<EventRow & { seq: number }>('SELECT * FROM system_events WHERE seq = ANY($1::bigint[])', [
        groups.map((g) => g.seq),
      ]);
      const newest = await q<EventRow>(`SELECT * ${PENDING} ORDER BY seq DESC LIMIT $3`, [...p, o.newest]);
      return {
        total: Number(total!.n),
        throughId: through!.id,
        byHook: byHook.map((r) => ({ hook: r.hook, count: Number(r.n) })),
        groups: groups.map((g) => ({
          sample: toEvent(samples.find((s) => Number(s.seq) === Number(g.seq))!),
          count: Number(g.n),
        })),
        newest: newest.map(toEvent),
      };
    },
  };
}
