/**
 * How both stores keep runs waiting for their coalescing window out of the claims' way. A burst of
 * runs about many entities (a mapping's `coalesce` with a key per entity) queues them all behind
 * their windows; claims reading queued runs in `seq` order read through every one of them, claim
 * after claim, while the burst goes on (50,000 waiting: 8 ms a claim on SQLite's serving thread,
 * the ingress five times slower with claims back to back).
 *
 * So claims read the ready runs only, by an index that leaves runs in a window out (`runs_ready`,
 * `ready`), and a claim first lets in a bounded batch of the runs whose window has ended, oldest
 * window first, by an index on the window's end (`runs_waiting`): their `coalesce_until` is
 * cleared. That changes nothing else: a run joins a queued run only while its window is open.
 */

/** Runs whose window ended that a claim lets in. */
export const READY_BATCH = 2000;

/** SQL (either store): a queued run (`r`, or `runs` unaliased) that no budget marked and no window holds. */
export const ready = (r?: string): string => {
  const c = r === undefined ? '' : `${r}.`;
  return `${c}state = 'queued' AND ${c}held_reason IS NULL AND ${c}coalesce_until IS NULL`;
};

/** SQL (either store): a queued run (`runs`, unaliased) whose window ended by `now` (an SQL expression), by `runs_waiting`. */
export const windowEnded = (now: string): string =>
  `state = 'queued' AND coalesce_until IS NOT NULL AND coalesce_until <= ${now}`;

/**
 * SQL (either store): lets in the runs whose window ended by `now`, at most `limit`, oldest window
 * first; `lock` is PostgreSQL's row-lock clause for the batch.
 */
export const letInDue = (now: string, limit: string, lock = ''): string =>
  `UPDATE runs SET coalesce_until = NULL WHERE seq IN (SELECT seq FROM runs
    WHERE ${windowEnded(now)} ORDER BY coalesce_until LIMIT ${limit}${lock})`;
