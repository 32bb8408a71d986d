/** A row found by a look: its `seq` and its `created_at`. */
export interface SeqHead {
  seq: number;
  t: number;
}

/**
 * How far after the store's clock a row may be dated and still be taken as in order. A row is dated
 * by the clock of the process that wrote it: a clock that ran ahead and was then set back (a reset
 * real-time clock, a resumed VM, NTP stepping it) leaves rows dated days or years ahead among rows
 * dated now, and replicas' clocks differ by a little. An hour is far beyond that little, and bounds
 * how long such a row can hold back the rows after it once it is within the hour.
 */
export const OUT_OF_ORDER_AFTER_MS = 60 * 60 * 1000;

/** How a store looks at a table for `findSeqBound` (each look an index seek while no row is dated ahead). */
interface SeqLooks {
  /** The first row with a `seq` from `seq` up to (not including) `below` whose `created_at` is at most `notAfter`. */
  atOrAfter(seq: number, below: number, notAfter: number): SeqHead | undefined | Promise<SeqHead | undefined>;
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
 *
 * A row dated more than `OUT_OF_ORDER_AFTER_MS` after `now` is left out of the search: taken as in
 * order, it would stand for every row after it (a table whose oldest row is dated a year ahead would
 * keep everything for a year). It lies inside the bound or past it like any other row, and the
 * batches' own conditions on time keep it until it is due. A look passes over such rows, and never
 * past `below`, so a search reads each of them at most once: a few dozen seeks when there are none.
 */
export async function findSeqBound(look: SeqLooks, cutoff: number, now: number): Promise<number> {
  const notAfter = now + OUT_OF_ORDER_AFTER_MS;
  // Invariant: the row at `lo` is in order and before the cut-off; no row in order at or after `hi` is.
  let hi = (await look.lastSeq()) + 1;
  const head = await look.atOrAfter(0, hi, notAfter);
  if (head === undefined || head.t >= cutoff) return 0;
  let lo = head.seq;
  while (hi - lo > 1) {
    const mid = lo + Math.floor((hi - lo) / 2);
    const row = await look.atOrAfter(mid, hi, notAfter);
    if (row === undefined || row.t >= cutoff) hi = mid;
    else lo = row.seq;
  }
  return lo;
}

/** The tables whose prune batches are bounded by `seq`, by the kind of work they hold. */
const BOUNDED_TABLES = {
  events: 'system_events',
  runs: 'runs',
  deliveries: 'deliveries',
  transcript: 'transcript',
  eventLog: 'event_log',
} as const;
type BoundedKind = keyof typeof BOUNDED_TABLES;
type PassBounds = Record<BoundedKind, number>;
const KINDS = Object.keys(BOUNDED_TABLES) as BoundedKind[];

/**
 * The bounds of the pruner's pass under way, found once for the pass (`boundOf(table)`: each
 * store's `findSeqBound` over that table, given the cut-off and the store's clock, read once for
 * the pass by `now`): its batches share its cut-offs, and the rows created before them do not move
 * (rows are only appended after them, and the batches only remove rows within them). Before,
 * SQLite searched again for every batch: 21 seeks of a million-run table, each a read of pages
 * outside the cache, 12 ms of a 15 ms batch.
 */
export function createPassBounds(
  boundOf: (table: string) => (cutoff: number, now: number) => Promise<number>,
  now: () => number | Promise<number>,
): (cutoffs: Readonly<Record<BoundedKind, number>>) => Promise<PassBounds> {
  const find = Object.fromEntries(KINDS.map((k) => [k, boundOf(BOUNDED_TABLES[k])])) as Record<
    BoundedKind,
    (cutoff: number, now: number) => Promise<number>
  >;
  let pass: { key: string; bounds: PassBounds } | null = null;
  return async (c) => {
    const key = JSON.stringify(KINDS.map((k) => c[k]));
    if (pass?.key !== key) {
      const bounds = {} as PassBounds;
      const t = await now();
      for (const k of KINDS) bounds[k] = await find[k](c[k], t);
      pass = { key, bounds };
    }
    return pass.bounds;
  };
}
