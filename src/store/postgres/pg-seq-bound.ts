import type pg from 'pg';
import { findSeqBound } from '../seq-bound.js';

/** The last `seq` of `table` whose `created_at` is before a cut-off (see seq-bound.ts), a round trip a seek. */
export function pgSeqBound(q: pg.Pool | pg.ClientBase, table: string, cutoff: number): Promise<number> {
  return findSeqBound({
    async atOrAfter(seq) {
      const { rows } = await q.query(`SELECT seq, created_at AS t FROM ${table} WHERE seq >= $1 ORDER BY seq LIMIT 1`, [seq]);
      const row = rows[0] as { seq: string; t: string } | undefined;
      return row === undefined ? undefined : { seq: Number(row.seq), t: Number(row.t) };
    },
    async lastSeq() {
      const { rows } = await q.query(`SELECT coalesce(max(seq), 0) AS seq FROM ${table}`);
      return Number((rows[0] as { seq: string }).seq);
    },
  }, cutoff);
}
