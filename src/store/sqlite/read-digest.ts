import type Database from 'better-sqlite3';
import { toEvent, type EventRow } from '../rows.js';
import type { PendingDigest } from '../types.js';
import { PENDING } from './consumed-marks.js';

/** Events are alike when they come from one hook and open with the same words, numbers aside. */
const SHAPE_CHARS = 40;
const SHAPE = `substr(${[...'0123456789'].reduce((sql, d) => `replace(${sql}, '${d}', '')`, 'e.text')}, 1, ${SHAPE_CHARS})`;

export interface DigestOptions {
  groups: number;
  newest: number;
}

/**
 * A digest of a session's pending events, read in one transaction (one snapshot). Over a large
 * backlog it reads every pending event, so the store runs it on a thread of its own (read-worker.ts).
 */
export function createDigestReader(db: Database.Database): (sessionKey: string, o: DigestOptions) => PendingDigest | null {
  const pending = `FROM system_events e WHERE e.session_key = @key AND ${PENDING('e', '@key')} AND e.seq <= @through`;
  const st = {
    last: db.prepare(`SELECT max(e.seq) AS seq FROM system_events e WHERE e.session_key = @key AND ${PENDING('e', '@key')}`),
    idOf: db.prepare('SELECT id FROM system_events WHERE seq = ?'),
    total: db.prepare(`SELECT count(*) AS n ${pending}`),
    byHook: db.prepare(`SELECT json_extract(e.source, '$.hook') AS hook, count(*) AS n ${pending} GROUP BY hook ORDER BY n DESC, hook`),
    groups: db.prepare(
      `SELECT max(e.seq) AS seq, count(*) AS n ${pending}
        GROUP BY json_extract(e.source, '$.hook'), ${SHAPE} ORDER BY n DESC, seq DESC LIMIT @limit`,
    ),
    bySeq: db.prepare('SELECT * FROM system_events WHERE seq = ?'),
    newest: db.prepare(`SELECT e.* ${pending} ORDER BY e.seq DESC LIMIT @limit`),
  };
  return db.transaction((sessionKey: string, o: DigestOptions): PendingDigest | null => {
    const through = (st.last.get({ key: sessionKey }) as { seq: number | null }).seq;
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
  });
}
