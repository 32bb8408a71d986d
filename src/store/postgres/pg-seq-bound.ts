import type pg from 'pg';
import { findSeqBound } from '../seq-bound.js';

/**
 * The last `seq` of `table` whose `created_at` is before a cut-off (see seq-bound.ts), rows dated
 * ahead of `now` judged by it; a round trip a seek.
 */
export function pgSeqBound(q: pg.Pool | pg.ClientBase, table: string, cutoff: number, now: number): Promise<number> {
  return findSeqBound(
    {
      async atOrAfter(seq, below, notAfter) {
        const { rows } = await q.query(
          `SELECT seq, created_at AS t FROM ${table} WHERE seq >= $1 AND seq < $2 AND created_at <= $3 ORDER BY seq LIMIT 1`,
          [seq, below, notAfter],
        );
        const row = rows[0] as { seq: string; t: string } | undefined;
        return row === undefined ? undefined : { seq: Number(row.seq), t: Number(row.t) };
      },
      async lastSeq() {
        const { rows } = await q.query(`SELECT coalesce(max(seq), 0) AS seq FROM ${table}`);
        return Number((rows[0] as { seq: string }).seq);
      },
    },
    cutoff,
    now,
  );
}
