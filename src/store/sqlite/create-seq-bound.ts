import type { Database } from 'better-sqlite3';

interface Head {
  seq: number;
  t: number;
}

/**
 * The last `seq` of `table` whose `created_at` is before `cutoff` (0 when there is none), by
 * binary search over the rowid: a dozen or two seeks, however long the table.
 *
 * Rows are appended in time order, so `created_at` rises with `seq` (up to the moments between a
 * row's timestamp and its commit), and finished work can be past its window only if it was
 * created before the cut-off. So a prune batch reads `seq <= bound` instead of scanning the whole
 * table for the few rows that are due, which on a million rows held the writer for a fifth of a
 * second per batch even when nothing was. A row a little out of order lands past the bound now
 * and inside it on a later pass, once the cut-off has moved past its neighbours.
 */
export function createSeqBound(db: Database, table: string): (cutoff: number) => number {
  const atOrAfter = db.prepare(`SELECT seq, created_at AS t FROM ${table} WHERE seq >= ? ORDER BY seq LIMIT 1`);
  const last = db.prepare(`SELECT max(seq) AS seq FROM ${table}`);
  return (cutoff) => {
    const head = atOrAfter.get(0) as Head | undefined;
    if (head === undefined || head.t >= cutoff) return 0;
    // Invariant: the row at `lo` is before the cut-off; no row at or after `hi` is.
    let lo = head.seq;
    let hi = (last.get() as { seq: number }).seq + 1;
    while (hi - lo > 1) {
      const mid = lo + Math.floor((hi - lo) / 2);
      const row = atOrAfter.get(mid) as Head | undefined;
      if (row === undefined || row.seq >= hi || row.t >= cutoff) hi = mid;
      else lo = row.seq;
    }
    return lo;
  };
}
