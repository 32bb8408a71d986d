import type { Database } from 'better-sqlite3';
import { findSeqBound, type SeqHead } from '../seq-bound.js';

/** The last `seq` of `table` whose `created_at` is before a cut-off (see seq-bound.ts). */
export function createSeqBound(db: Database, table: string): (cutoff: number) => Promise<number> {
  const atOrAfter = db.prepare(`SELECT seq, created_at AS t FROM ${table} WHERE seq >= ? ORDER BY seq LIMIT 1`);
  const last = db.prepare(`SELECT coalesce(max(seq), 0) FROM ${table}`).pluck();
  return (cutoff) => findSeqBound({
    atOrAfter: (seq) => atOrAfter.get(seq) as SeqHead | undefined,
    lastSeq: () => last.get() as number,
  }, cutoff);
}
