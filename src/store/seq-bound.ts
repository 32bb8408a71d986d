/** The first row at or after a `seq`: its `seq` and its `created_at`. */
export interface SeqHead {
  seq: number;
  t: number;
}

/** How a store looks at a table for `findSeqBound` (each look an index seek). */
export interface SeqLooks {
  atOrAfter(seq: number): SeqHead | undefined | Promise<SeqHead | undefined>;
  lastSeq(): number | Promise<number>;
}

/**
 * The last `seq` of a table whose `created_at` is before `cutoff` (0 when there is none), by binary
 * search over `seq`: a dozen or two seeks, however long the table.
 *
 * Rows are appended in time order, so `created_at` rises with `seq` (up to the moments between a
 * row's timestamp and its commit, and the clocks of replicas), and finished work can be past its
 * window only if it was created before the cut-off. So a prune batch reads `seq <= bound` instead
 * of scanning the whole table for the few rows that are due: on a million rows that held SQLite's
 * writer for a fifth of a second per batch even when nothing was, and on PostgreSQL each pass of
 * the pruner read every table through (80 ms for 500,000 events, measured). A row a little out of
 * order lands past the bound now and inside it on a later pass, once the cut-off has moved past its
 * neighbours.
 */
export async function findSeqBound(look: SeqLooks, cutoff: number): Promise<number> {
  const head = await look.atOrAfter(0);
  if (head === undefined || head.t >= cutoff) return 0;
  // Invariant: the row at `lo` is before the cut-off; no row at or after `hi` is.
  let lo = head.seq;
  let hi = (await look.lastSeq()) + 1;
  while (hi - lo > 1) {
    const mid = lo + Math.floor((hi - lo) / 2);
    const row = await look.atOrAfter(mid);
    if (row === undefined || row.seq >= hi || row.t >= cutoff) hi = mid;
    else lo = row.seq;
  }
  return lo;
}

/** The tables whose prune batches are bounded by `seq`, by the kind of work they hold. */
const BOUNDED_TABLES = { events: 'system_events', runs: 'runs', deliveries: 'deliveries', transcript: 'transcript' } as const;
export type BoundedKind = keyof typeof BOUNDED_TABLES;
export type PassBounds = Record<BoundedKind, number>;
const KINDS = Object.keys(BOUNDED_TABLES) as BoundedKind[];

/**
 * The bounds of the pruner's pass under way, found once for the pass (`boundOf(table)`: each
 * store's `findSeqBound` over that table): its batches share its cut-offs, and the rows created
 * before them do not move (rows are only appended after them, and the batches only remove rows
 * within them). Before, SQLite searched again for every batch: 21 seeks of a million-run table,
 * each a read of pages outside the cache, 12 ms of a 15 ms batch.
 */
export function createPassBounds(
  boundOf: (table: string) => (cutoff: number) => Promise<number>,
): (cutoffs: Record<BoundedKind, number>) => Promise<PassBounds> {
  const find = Object.fromEntries(KINDS.map((k) => [k, boundOf(BOUNDED_TABLES[k])])) as Record<BoundedKind, (cutoff: number) => Promise<number>>;
  let pass: { key: string; bounds: PassBounds } | null = null;
  return async (c) => {
    const key = JSON.stringify(KINDS.map((k) => c[k]));
    if (pass?.key !== key) {
      const bounds = {} as PassBounds;
      for (const k of KINDS) bounds[k] = await find[k](c[k]);
      pass = { key, bounds };
    }
    return pass.bounds;
  };
}
