import { sameLimit, type BudgetPlan, type BudgetScope } from './run-budgets.js';

/**
 * How the stores keep a held backlog out of every claim's way. A queued run that a budget holds is
 * marked (its `held_reason` set), and claims read only unmarked runs, through an index that leaves
 * the marked ones out: a claim costs the same with a hundred thousand runs held as with none.
 *
 * The keys the marks are made for are kept beside them (the `held_keys` table), each with what its
 * runs should say (its reasons now; none once its budget lets runs through again) and the pass that
 * brings its runs' marks there. A pass goes through the key's runs in `seq` order, a bounded batch
 * per claim, so a key held or let go with a hundred thousand runs queued never stops a claim for
 * long. A key stays listed while any run may still carry its mark, and a claim reads the marked runs
 * of a listed key its budget lets through: a run is never left out of claims by a stale mark.
 */

/**
 * Which runs of its key a pass is going through: a key newly held marks its unmarked runs; a key
 * held by another limit marks its unmarked runs and then rewrites its marked ones; a key let
 * through clears its marked ones.
 */
type PassPhase = 'new' | 'unmarked' | 'marked';

/** A key whose queued runs are (or are being) marked, and what they should say. */
export interface HeldKey {
  scope: BudgetScope;
  key: string;
  /** The reason a new run of the key is held; `null` once the key lets runs through (its marks are being cleared). */
  reason: string | null;
  /** The reason a run started before is held; `null`: restarts pass. */
  restartReason: string | null;
  /** The pass in progress, or `null` when every run of the key says what it should. */
  phase: PassPhase | null;
  /** The last `seq` the pass went through. */
  cursor: number;
}

/** A `held_keys` row as both stores read it. */
export interface HeldKeyRow {
  scope: BudgetScope;
  key: string;
  reason: string | null;
  restart_reason: string | null;
  phase: PassPhase | null;
  pass_seq: number | string;
}

/**
 * SQL (either store), for an `UPDATE runs` that puts a run that started back in the queue (handed
 * back, or requeued after its process died): the mark it takes from the keys listed now, the
 * reason its agent or mapping holds restarts. Such a run's `seq` is behind every pass and watermark,
 * so without it the run would wait unmarked and say nothing; a listed key's later pass goes
 * through all its runs from the start, so the mark never outlives the key's listing.
 */
export const RESTART_MARK = `held_reason = coalesce(
    (SELECT h.restart_reason FROM held_keys h WHERE h.scope = 'agents' AND h.key = runs.agent_id AND h.reason IS NOT NULL),
    (SELECT h.restart_reason FROM held_keys h WHERE h.scope = 'hooks' AND h.key = runs.hook AND h.reason IS NOT NULL))`;

/** Reads every `held_keys` row, in either store's SQL. */
export const SELECT_HELD_KEYS = 'SELECT scope, key, reason, restart_reason, phase, pass_seq FROM held_keys';

export const toHeldKey = (r: HeldKeyRow): HeldKey => ({
  scope: r.scope,
  key: r.key,
  reason: r.reason,
  restartReason: r.restart_reason,
  phase: r.phase,
  cursor: Number(r.pass_seq),
});

type KeysByScope = Record<BudgetScope, string[]>;

/** Runs a claim's passes go through in all: a key held or let go with many runs queued is marked over several claims. */
export const MARK_BATCH = 2_000;

const SCOPES: readonly BudgetScope[] = ['agents', 'hooks'];

const idOf = (k: { scope: BudgetScope; key: string }): string => `${k.scope}\u0000${k.key}`;

/**
 * The held keys after a claim whose plan ended as `plan` (none held without budgets): each key the
 * plan holds, with its reasons; a listed key the plan lets through, with none. A key whose reasons
 * changed starts a new pass (see `PassPhase`), unless they name the same limits as before and only
 * the usage they report moved: its marked runs keep their text.
 * `changed` says whether anything differs from `rows`.
 */
export function nextHeldKeys(rows: readonly HeldKey[], plan: BudgetPlan | null): { rows: HeldKey[]; changed: boolean } {
  const wanted = new Map<string, Pick<HeldKey, 'scope' | 'key' | 'reason' | 'restartReason'>>();
  for (const scope of plan === null ? [] : SCOPES) {
    for (const [key, reason] of plan!.blocked[scope]) {
      wanted.set(idOf({ scope, key }), {
        scope,
        key,
        reason,
        restartReason: plan!.blockedRestarts[scope].get(key) ?? null,
      });
    }
  }
  const out: HeldKey[] = [];
  let changed = false;
  const seen = new Set<string>();
  for (const row of rows) {
    const id = idOf(row);
    seen.add(id);
    const w = wanted.get(id);
    const reason = w?.reason ?? null;
    const restartReason = w?.restartReason ?? null;
    if (row.reason === reason && row.restartReason === restartReason) {
      out.push(row);
      continue;
    }
    changed = true;
    if (reason !== null && sameLimit(row.reason, reason) && sameLimit(row.restartReason, restartReason)) {
      // Only the usage the text reports moved (tokens spent aging out of the window while the key
      // stays held, say): new marks say it; marked runs keep the count they were marked with, not
      // rewritten a batch a claim each time it moves, and a pass in progress goes on.
      out.push({ ...row, reason, restartReason });
      continue;
    }
    out.push({ ...row, reason, restartReason, phase: reason === null ? 'marked' : 'unmarked', cursor: 0 });
  }
  for (const [id, w] of wanted) {
    if (seen.has(id)) continue;
    changed = true;
    out.push({ ...w, phase: 'new', cursor: 0 });
  }
  return { rows: out, changed };
}

/** How far a batch of a pass went: the `seq`s it went through, out of at most `limit`. */
export function advancePass(row: HeldKey, seqs: readonly number[], limit: number): HeldKey | null {
  if (seqs.length === limit) return { ...row, cursor: seqs[seqs.length - 1]! };
  if (row.phase === 'unmarked') return { ...row, phase: 'marked', cursor: 0 };
  if (row.phase === 'new') return { ...row, phase: null, cursor: 0 };
  // The pass is done: a key that lets runs through is no longer listed once its marks are gone.
  return row.reason === null ? null : { ...row, phase: null, cursor: 0 };
}

/** The listed keys after a claim's passes, whether they changed, and how much of the batch is left. */
interface PassesDone {
  rows: HeldKey[];
  changed: boolean;
  left: number;
}

/**
 * A claim's passes, a batch at a time, within `budget` runs in all: yields the key whose pass goes
 * on and how many runs its next batch may take, is given back the `seq`s that batch went through
 * (the store marks them meanwhile), and returns the keys as they stand after.
 */
export function* runPasses(
  next: { rows: readonly HeldKey[]; changed: boolean },
  budget: number,
): Generator<{ row: HeldKey; limit: number }, PassesDone, number[]> {
  let changed = next.changed;
  let left = budget;
  const rows: HeldKey[] = [];
  for (const row of next.rows) {
    let r: HeldKey | null = row;
    while (r !== null && r.phase !== null && left > 0) {
      const limit = left;
      const seqs: number[] = yield { row: r, limit };
      left -= seqs.length;
      r = advancePass(r, seqs, limit);
    }
    if (r !== row) changed = true;
    if (r !== null) rows.push(r);
  }
  return { rows, changed, left };
}

/**
 * Whether runs a budget holds may still sit unmarked among the claimable ones: the plan holds a key
 * not listed yet, or a listed key's pass is still marking its unmarked runs. A claim then reads only
 * the oldest unmarked runs and the heads of a few sessions, not every queued run, which would wade
 * through that backlog claim after claim; it announces more work instead, so the next claim comes
 * at once and the passes go on, a batch a claim.
 */
export function marksBehind(rows: readonly HeldKey[], plan: BudgetPlan | null): boolean {
  if (rows.some((k) => k.reason !== null && (k.phase === 'new' || k.phase === 'unmarked'))) return true;
  if (plan === null) return false;
  for (const scope of SCOPES) {
    for (const key of plan.blocked[scope].keys()) {
      if (!rows.some((k) => k.scope === scope && k.key === key && k.reason !== null)) return true;
    }
  }
  return false;
}

/** Listed keys whose marked runs the plan lets through now (all of them without budgets): claim candidates. */
export function reopenedKeys(rows: readonly HeldKey[], plan: BudgetPlan | null): KeysByScope {
  const out: KeysByScope = { agents: [], hooks: [] };
  for (const k of rows) {
    const open =
      plan === null ||
      k.reason === null ||
      !plan.blocked[k.scope].has(k.key) ||
      (k.restartReason !== null && !plan.blockedRestarts[k.scope].has(k.key));
    if (open) out[k.scope].push(k.key);
  }
  return out;
}

/** Claim candidates from several queries, each in `seq` order: one list in `seq` order, each run once, at most `limit`. */
export function mergeCandidates<T extends { id: string; seq: number | string }>(
  lists: readonly T[][],
  limit: number,
): T[] {
  if (lists.length === 1) return lists[0]!.slice(0, limit);
  const seen = new Set<string>();
  const all = lists.flat().filter((r) => {
    if (seen.has(r.id)) return false;
    seen.add(r.id);
    return true;
  });
  return all.sort((a, b) => Number(a.seq) - Number(b.seq)).slice(0, limit);
}
