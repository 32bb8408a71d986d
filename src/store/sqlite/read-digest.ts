import type Database from 'better-sqlite3';
import { toEvent, type EventRow } from '../rows.js';
import type { DigestOptions, PendingDigest } from '../maintenance-types.js';
import { HIGH, HOOK, PENDING, SHAPE } from './consumed-marks-sql.js';

/** One kind of ordinary event: its hook, shape, newest event and size. */
interface GroupRow {
  hook: string | null;
  shape: string;
  seq: number;
  /** The oldest event's. */
  first: number;
  n: number;
  /** 1 for the high-priority events of a hook and shape, which are listed, not grouped. */
  high: 0 | 1;
}

/** Larger kinds first, and of equal ones the newest. */
const ahead = (a: GroupRow, b: GroupRow): boolean => a.n > b.n || (a.n === b.n && a.seq > b.seq);

/** Keeps `row` in `top` (ordered by `ahead`) if it is among the `limit` first. */
function keepTop(top: GroupRow[], row: GroupRow, limit: number): void {
  if (top.length === limit && (limit === 0 || !ahead(row, top[limit - 1]!))) return;
  let i = top.length;
  while (i > 0 && ahead(row, top[i - 1]!)) i--;
  top.splice(i, 0, row);
  if (top.length > limit) top.pop();
}

const byRank = (a: GroupRow, b: GroupRow): number => (ahead(a, b) ? -1 : ahead(b, a) ? 1 : 0);

/** SQLite's order of hooks: `NULL` first, then text by its UTF-8 bytes (the BINARY collation). */
function compareHooks(a: string | null, b: string | null): number {
  if (a === b) return 0;
  if (a === null) return -1;
  if (b === null) return 1;
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

/**
 * The kinds a digest shows: every kind ranked, each hook's largest kind ahead of all the others and
 * larger kinds (then newer) first within each part; the first `max(groups, min(hooks with
 * kinds, hooks))` of them. PostgreSQL ranks them the same way in SQL (create-pg-digest.ts).
 */
function selectKinds(bestOfHook: Map<string | null, GroupRow>, top: GroupRow[], o: DigestOptions): GroupRow[] {
  const firsts = [...bestOfHook.values()].sort(byRank);
  const limit = Math.max(o.groups, Math.min(firsts.length, o.hooks));
  if (firsts.length >= limit) return firsts.slice(0, limit);
  // `top` holds the `groups` largest kinds: enough of the others, since the firsts take part of it.
  const others = top.filter((g) => bestOfHook.get(g.hook) !== g);
  return [...firsts, ...others.slice(0, limit - firsts.length)];
}

/**
 * A digest of a session's pending events, read in one transaction (one snapshot). Over a large
 * backlog it reads every pending event, so the store runs it on a thread of its own (read-worker.ts).
 * The backlog is read once, grouped by hook, shape and priority: the total, the counts by hook and
 * the kinds to show all come from the groups, which saves more passes over it.
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
      `SELECT ${HOOK('e')} AS hook, ${SHAPE('e')} AS shape, ${HIGH('e')} AS high, max(e.seq) AS seq, min(e.seq) AS first, count(*) AS n
        ${pending} GROUP BY 1, 2, 3`,
    ),
    bySeq: db.prepare('SELECT * FROM system_events WHERE seq = ?'),
    newest: db.prepare(`SELECT e.* ${pending} AND NOT ${HIGH('e')} ORDER BY e.seq DESC LIMIT @limit`),
    high: db.prepare(`SELECT e.* ${pending} AND e.seq >= @from AND ${HIGH('e')} ORDER BY e.seq LIMIT @limit`),
  };
  return db.transaction((sessionKey: string, o: DigestOptions): PendingDigest | null => {
    const through = (st.last.get({ key: sessionKey }) as { seq: number | null }).seq;
    if (through === null) return null;
    const p = { key: sessionKey, through };
    let total = 0;
    let kinds = 0;
    let highTotal = 0;
    let firstHigh = Number.POSITIVE_INFINITY;
    const byHook = new Map<string | null, number>();
    const bestOfHook = new Map<string | null, GroupRow>();
    const top: GroupRow[] = [];
    for (const row of st.groups.iterate(p) as IterableIterator<GroupRow>) {
      total += row.n;
      byHook.set(row.hook, (byHook.get(row.hook) ?? 0) + row.n);
      if (row.high === 1) {
        highTotal += row.n;
        firstHigh = Math.min(firstHigh, row.first);
        continue;
      }
      kinds++;
      const best = bestOfHook.get(row.hook);
      if (best === undefined || ahead(row, best)) bestOfHook.set(row.hook, row);
      keepTop(top, row, o.groups);
    }
    return {
      total,
      throughId: (st.idOf.get(through) as { id: string }).id,
      byHook: [...byHook]
        .sort(([ha, a], [hb, b]) => b - a || compareHooks(ha, hb))
        .map(([hook, count]) => ({ hook: hook as string, count })),
      groups: selectKinds(bestOfHook, top, o).map((g) => ({
        sample: toEvent(st.bySeq.get(g.seq) as EventRow),
        count: g.n,
        kind: { hook: g.hook, shape: g.shape },
      })),
      kinds,
      // Read from the oldest one on, and not at all without any: a second pass over the backlog.
      high:
        highTotal === 0 || o.high === 0
          ? []
          : (st.high.all({ ...p, from: firstHigh, limit: o.high }) as EventRow[]).map(toEvent),
      highTotal,
      newest: (st.newest.all({ ...p, limit: o.newest }) as EventRow[]).map(toEvent),
    };
  });
}
