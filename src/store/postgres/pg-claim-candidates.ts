import type pg from 'pg';
import { letInDue, READY_BATCH, ready, windowEnded } from '../ready-runs.js';
import { nowOnceSql } from './pg-context.js';

/** Ready runs a claim reads in order; past that it looks session by session. */
const CLAIM_SCAN = 1000;
/**
 * Ready runs a claim reads first (`firstCandidates`): most claims find what they need among them,
 * for a fraction of the cost of reading `CLAIM_SCAN` (with 100,000 runs ready, the heads among a
 * thousand cost 14 ms a claim under budgets, and the session walk that followed 11 ms).
 */
const FIRST_SCAN = 32;

/** Candidates among the first `FIRST_SCAN` ready runs (see `firstCandidates`). */
interface FirstCandidates {
  /** The first open run of its session among them, in `seq` order, at most `limit`. */
  found: number[];
  /** No more runs are ready: `found` is every candidate. */
  whole: boolean;
  /** The `seq` of the last ready run read: a candidate from elsewhere past it may come only after the full read. */
  through: number;
}

/**
 * The cheap first look of a claim: the heads among the first few ready runs, after letting in the
 * runs whose window ended. A claim that finds what it needs here, taking nothing past `through`,
 * takes what `claimCandidates` would have given it; otherwise it reads that too.
 */
export async function firstCandidates(
  q: pg.Pool | pg.PoolClient,
  o: { limit: number | null; clock: number | null; scan?: number | undefined },
): Promise<FirstCandidates> {
  const scan = Math.min(o.scan ?? CLAIM_SCAN, FIRST_SCAN);
  const { queued, found, through } = await readHeads(q, o, scan);
  return { found, whole: queued <= scan, through };
}

/**
 * One statement: the heads among the first `scan` ready runs in order (at most `limit`), how many
 * are ready (up to `scan + 1`), the `seq` of the last of them read, and whether runs wait to be let
 * in (their coalescing window ended; see ready-runs.ts), which are let in and read again.
 */
async function readHeads(
  q: pg.Pool | pg.PoolClient,
  o: { limit: number | null; clock: number | null },
  scan: number,
): Promise<{ queued: number; found: number[]; through: number }> {
  const read = async (): Promise<{ queued: number; found: string[]; through: string | null; due: boolean }> =>
    (
      await q.query(
        `SELECT (SELECT count(*)::int FROM (SELECT 1 FROM runs WHERE ${ready()} ORDER BY seq LIMIT $4) c) AS queued,
      ARRAY(SELECT w.seq FROM (SELECT seq, session_key FROM runs WHERE ${ready()} ORDER BY seq LIMIT $1) w
        WHERE (SELECT o.seq FROM runs o
          WHERE o.state IN ('queued', 'running') AND o.session_key >= w.session_key ORDER BY o.session_key, o.seq LIMIT 1) = w.seq
        ORDER BY w.seq LIMIT $2)::text[] AS found,
      (SELECT max(seq) FROM (SELECT seq FROM runs WHERE ${ready()} ORDER BY seq LIMIT $1) l) AS through,
      EXISTS (SELECT 1 FROM runs WHERE ${windowEnded(nowOnceSql(3))}) AS due`,
        [scan, o.limit, o.clock, scan + 1],
      )
    ).rows[0];
  let first = await read();
  if (first.due) {
    await q.query(letInDue(nowOnceSql(1), '$2', ' FOR UPDATE SKIP LOCKED'), [o.clock, READY_BATCH]);
    first = await read();
  }
  return { queued: first.queued, found: first.found.map(Number), through: Number(first.through ?? 0) };
}

/**
 * Where a claim looks for runs it may take (the `seq`s of ready runs: queued, no budget marked them
 * held and no coalescing window holds them, each the first open run of its session when read),
 * after letting in a batch of runs whose window ended. Every claimable run is the oldest open run
 * of its session, so a long line queued behind one busy session (a mapping with a fixed
 * `sessionKey`) would cost a scan in `seq` order a probe per waiting run, 100,000 of them a claim.
 * The claim reads the first `scan` ready runs in order, up to `limit` of them first in their
 * session (no limit when budgets may leave some out); when that finds too few and more are queued,
 * each session's oldest open run, skipping along the `runs_open_session` index, as long as no more
 * than `scan` sessions have open runs. `null`: more sessions than that, where the plain scan in
 * `seq` order finds claimable runs early.
 *
 * A session's oldest run is never looked up by its key alone (`session_key = $k ORDER BY seq LIMIT
 * 1`): the planner may walk `runs_open` in `seq` order for it instead, through every run of the busy
 * session (190–300 ms a claim over 100,000, measured). It is found by a range on `session_key`,
 * ordered as the index is.
 */
export async function claimCandidates(
  q: pg.Pool | pg.PoolClient,
  o: { limit: number | null; clock: number | null; scan?: number | undefined },
): Promise<number[] | null> {
  const scan = o.scan ?? CLAIM_SCAN;
  const { queued, found } = await readHeads(q, o, scan);
  if ((o.limit !== null && found.length >= o.limit) || queued <= scan) return found;
  // Each step reads the first open run of the next session in `(session_key, seq)` order, the
  // index's own: that run is the session's oldest.
  const { rows } = await q.query(
    `WITH RECURSIVE s (key, seq, ready) AS (
        (SELECT session_key, seq, state = 'queued' AND held_reason IS NULL FROM runs WHERE state IN ('queued', 'running')
          ORDER BY session_key, seq LIMIT 1)
        UNION ALL
        SELECT n.session_key, n.seq, n.ready FROM s CROSS JOIN LATERAL (
          SELECT o.session_key, o.seq, o.state = 'queued' AND o.held_reason IS NULL AS ready FROM runs o
          WHERE o.state IN ('queued', 'running') AND o.session_key > s.key ORDER BY o.session_key, o.seq LIMIT 1) n)
      SELECT seq, ready FROM s LIMIT $1`,
    [scan + 1],
  );
  const heads = rows as Array<{ seq: number; ready: boolean }>;
  if (heads.length > scan) return null;
  return [...new Set([...found, ...heads.filter((h) => h.ready).map((h) => h.seq)])];
}
