import { toEvent, type EventRow } from '../rows.js';
import type { StoreReader } from '../store.js';
import type { PgContext } from './pg-context.js';

/** Events are alike when they come from one hook and open with the same words, numbers aside. */
const SHAPE_CHARS = 40;
const PENDING = 'FROM system_events WHERE session_key = $1 AND consumed_at IS NULL AND seq <= $2';

export function createPgDigest({ pool }: Pick<PgContext, 'pool'>): Pick<StoreReader, 'digestPending'> {
  const q = async <T>(text: string, values: unknown[]): Promise<T[]> => (await pool.query(text, values)).rows as T[];
  return {
    async digestPending(sessionKey, o) {
      const [last] = await q<{ seq: number | null }>(
        'SELECT max(seq) AS seq FROM system_events WHERE session_key = $1 AND consumed_at IS NULL', [sessionKey]);
      if (last?.seq == null) return null;
      const p = [sessionKey, last.seq];
      const [through] = await q<{ id: string }>('SELECT id FROM system_events WHERE seq = $1', [last.seq]);
      const [total] = await q<{ n: number }>(`SELECT count(*) AS n ${PENDING}`, p);
      const byHook = await q<{ hook: string; n: number }>(
        `SELECT source::jsonb ->> 'hook' AS hook, count(*) AS n ${PENDING} GROUP BY 1 ORDER BY n DESC, hook`, p);
      const groups = await q<{ seq: number; n: number }>(
        `SELECT max(seq) AS seq, count(*) AS n ${PENDING} GROUP BY source::jsonb ->> 'hook', left(translate(text, '0123456789', ''), ${SHAPE_CHARS})
          ORDER BY n DESC, seq DESC LIMIT $3`, [...p, o.groups]);
      const samples = await q<EventRow & { seq: number }>('SELECT * FROM system_events WHERE seq = ANY($1::bigint[])', [groups.map((g) => g.seq)]);
      const newest = await q<EventRow>(`SELECT * ${PENDING} ORDER BY seq DESC LIMIT $3`, [...p, o.newest]);
      return {
        total: Number(total!.n),
        throughId: through!.id,
        byHook: byHook.map((r) => ({ hook: r.hook, count: Number(r.n) })),
        groups: groups.map((g) => ({ sample: toEvent(samples.find((s) => Number(s.seq) === Number(g.seq))!), count: Number(g.n) })),
        newest: newest.map(toEvent),
      };
    },
  };
}
