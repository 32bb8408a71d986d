import { toEvent, type EventRow } from '../rows.js';
import type { StoreReader } from '../store.js';
import type { SqliteContext } from './sqlite-context.js';

/** Events are alike when they come from one hook and open with the same words, numbers aside. */
const SHAPE_CHARS = 40;
const SHAPE = `substr(${[...'0123456789'].reduce((sql, d) => `replace(${sql}, '${d}', '')`, 'text')}, 1, ${SHAPE_CHARS})`;

export function createSqliteDigest({ db }: Pick<SqliteContext, 'db'>): Pick<StoreReader, 'digestPending'> {
  const pending = "FROM system_events WHERE session_key = @key AND consumed_at IS NULL AND seq <= @through";
  const st = {
    last: db.prepare('SELECT max(seq) AS seq FROM system_events WHERE session_key = ? AND consumed_at IS NULL'),
    idOf: db.prepare('SELECT id FROM system_events WHERE seq = ?'),
    total: db.prepare(`SELECT count(*) AS n ${pending}`),
    byHook: db.prepare(`SELECT json_extract(source, '$.hook') AS hook, count(*) AS n ${pending} GROUP BY hook ORDER BY n DESC, hook`),
    groups: db.prepare(
      `SELECT max(seq) AS seq, count(*) AS n ${pending}
        GROUP BY json_extract(source, '$.hook'), ${SHAPE} ORDER BY n DESC, seq DESC LIMIT @limit`,
    ),
    bySeq: db.prepare('SELECT * FROM system_events WHERE seq = ?'),
    newest: db.prepare(`SELECT * ${pending} ORDER BY seq DESC LIMIT @limit`),
  };
  return {
    async digestPending(sessionKey, o) {
      const through = (st.last.get(sessionKey) as { seq: number | null }).seq;
      if (through === null) return null;
      const p = { key: sessionKey, through };
      const groups = (st.groups.all({ ...p, limit: o.groups }) as Array<{ seq: number; n: number }>)
        .map((g) => ({ sample: toEvent(st.bySeq.get(g.seq) as EventRow), count: g.n }));
      return {
        total: (st.total.get(p) as { n: number }).n,
        throughId: (st.idOf.get(through) as { id: string }).id,
        byHook: (st.byHook.all(p) as Array<{ hook: string; n: number }>).map((r) => ({ hook: r.hook, count: r.n })),
        groups,
        newest: (st.newest.all({ ...p, limit: o.newest }) as EventRow[]).map(toEvent),
      };
    },
  };
}
