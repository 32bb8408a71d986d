import type { Database } from 'better-sqlite3';
import { findSeqBound, type SeqHead } from '../seq-bound.js';

/** The last `seq` of `table` whose `created_at` is before a cut-off (see seq-bound.ts), by the store's clock `now`. */
export function createSeqBound(db: Database, table: string): (cutoff: number, now: number) => Promise<number> {
  // By the rowid: the first row of the range is the answer unless it is dated ahead.
  const atOrAfter = db.prepare(
    `SELECT seq, created_at AS t FROM ${table} WHERE seq >= ? AND seq < ? AND created_at <= ? ORDER BY seq LIMIT 1`,
  );
  const last = db.prepare(`SELECT coalesce(max(seq), 0) FROM ${table}`).pluck();
  return (cutoff, now) =>
    findSeqBound(
      {
        atOrAfter: (seq, below, notAfter) => atOrAfter.get(seq, below, notAfter) as SeqHead | undefined,
        lastSeq: () => last.get() as number,
      },
      cutoff,
      now,
    );
}
