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

/** One group of alike events: its hook, newest event and size. */
interface GroupRow {
  hook: string | null;
  seq: number;
  n: number;
}

/** Larger groups first, and of equal ones the newest. */
const ahead = (a: GroupRow, b: GroupRow): boolean => a.n > b.n || (a.n === b.n && a.seq > b.seq);

/** Keeps `row` in `top` (ordered by `ahead`) if it is among the `limit` first. */
function keepTop(top: GroupRow[], row: GroupRow, limit: number): void {
  if (top.length === limit && (limit === 0 || !ahead(row, top[limit - 1]!))) return;
  let i = top.length;
  while (i > 0 && ahead(row, top[i - 1]!)) i--;
  top.splice(i, 0, row);
  if (top.length > limit) top.pop();
}

/** SQLite's order of hooks: `NULL` first, then text by its UTF-8 bytes (the BINARY collation). */
function compareHooks(a: string | null, b: string | null): number {
  if (a === b) return 0;
  if (a === null) return -1;
  if (b === null) return 1;
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

/**
 * A digest of a session's pending events, read in one transaction (one snapshot). Over a large
 * backlog it reads every pending event, so the store runs it on a thread of its own (read-worker.ts).
 * The backlog is read once, grouped by hook and shape: the total and the counts by hook are the
 * groups' sums, which saves two more passes over it.
 */
export function createDigestReader(
  db: Database.Database,
): (sessionKey: string, o: DigestOptions) => PendingDigest | null {
  const pending = `FROM system_events e WHERE e.session_key = @key AND ${PENDING('e', '@key')} AND e.seq <= @through`;
  const st = {
    last: db.prepare(
      `SELECT max(e.seq) AS seq FROM system_events e WHERE e.session_key = @key AND ${PENDING('e', '@key')}`,
    ),
    idOf: db.prepare('SELECT id FROM system_events WHERE seq = ?'),
    groups: db.prepare(
      `SELECT json_extract(e.source, '$.hook') AS hook, max(e.seq) AS seq, count(*) AS n ${pending} GROUP BY 1, ${SHAPE}`,
    ),
    bySeq: db.prepare('SELECT * FROM system_events WHERE seq = ?'),
    newest: db.prepare(`SELECT e.* ${pending} ORDER BY e.seq DESC LIMIT @limit`),
  };
  return db.transaction((sessionKey: string, o: DigestOptions): PendingDigest | null => {
    const through = (st.last.get({ key: sessionKey }) as { seq: number | null }).seq;
    if (through === null) return null;
    const p = { key: sessionKey, through };
    let total = 0;
    const byHook = new Map<string | null, number>();
    const top: GroupRow[] = [];
    for (const row of st.groups.iterate(p) as IterableIterator<GroupRow>) {
      total += row.n;
      byHook.set(row.hook, (byHook.get(row.hook) ?? 0) + row.n);
      keepTop(top, row, o.groups);
    }
    return {
      total,
      throughId: (st.idOf.get(through) as { id: string }).id,
      byHook: [...byHook]
        .sort(([ha, a], [hb, b]) => b - a || compareHooks(ha, hb))
        .map(([hook, count]) => ({ hook: hook as string, count })),
      groups: top.map((g) => ({ sample: toEvent(st.bySeq.get(g.seq) as EventRow), count: g.n })),
      newest: (st.newest.all({ ...p, limit: o.newest }) as EventRow[]).map(toEvent),
    };
  });
}
