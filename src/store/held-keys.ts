import type { BudgetPlan, BudgetScope } from './run-budgets.js';

/**
 * How the stores keep a held backlog out of every claim's way. A queued run that a budget holds is
 * marked (its `held_reason` set), and claims read only unmarked runs, through an index that leaves
 * the marked ones out: a claim costs the same with a hundred thousand runs held as with none. The
 * keys the marks were made for are kept beside them (the `held_keys` table), so a claim rewrites
 * the marks of a key's runs only when that key's reasons change, and finds the marked runs of a key
 * its budget lets through again by that key's own index.
 */

/** A budgeted key whose queued runs are marked held: its reason for a new start, and for a restart (none: restarts pass). */
export interface HeldKey {
  scope: BudgetScope;
  key: string;
  reason: string;
  restartReason: string | null;
}

export type KeysByScope = Record<BudgetScope, string[]>;

const SCOPES: readonly BudgetScope[] = ['agents', 'hooks'];

/** The held keys a plan describes; none without budgets. */
export function heldKeysOf(plan: BudgetPlan | null): HeldKey[] {
  if (plan === null) return [];
  return SCOPES.flatMap((scope) => [...plan.blocked[scope]].map(([key, reason]): HeldKey => ({
    scope, key, reason, restartReason: plan.blockedRestarts[scope].get(key) ?? null,
  })));
}

const idOf = (k: HeldKey): string => `${k.scope}\u0000${k.key}`;

/** The keys whose runs' marks must be rewritten to go from `marked` to `wanted`: every key whose reasons differ. */
export function changedKeys(marked: readonly HeldKey[], wanted: readonly HeldKey[]): KeysByScope {
  const before = new Map(marked.map((k) => [idOf(k), k]));
  const after = new Map(wanted.map((k) => [idOf(k), k]));
  const out: KeysByScope = { agents: [], hooks: [] };
  for (const [id, k] of before) {
    const w = after.get(id);
    if (w === undefined || w.reason !== k.reason || w.restartReason !== k.restartReason) out[k.scope].push(k.key);
  }
  for (const [id, k] of after) if (!before.has(id)) out[k.scope].push(k.key);
  return out;
}

/** Marked keys whose runs the plan lets through now, new starts or restarts: their marked runs are claim candidates. */
export function reopenedKeys(marked: readonly HeldKey[], plan: BudgetPlan): KeysByScope {
  const out: KeysByScope = { agents: [], hooks: [] };
  for (const k of marked) {
    const restartsOpen = k.restartReason !== null && !plan.blockedRestarts[k.scope].has(k.key);
    if (!plan.blocked[k.scope].has(k.key) || restartsOpen) out[k.scope].push(k.key);
  }
  return out;
}

/** Whether any key is listed. */
export function anyKeys(keys: KeysByScope): boolean {
  return keys.agents.length > 0 || keys.hooks.length > 0;
}

/** Claim candidates from several queries, each in `seq` order: one list in `seq` order, each run once, at most `limit`. */
export function mergeCandidates<T extends { id: string; seq: number | string }>(lists: readonly T[][], limit: number): T[] {
  if (lists.length === 1) return lists[0]!.slice(0, limit);
  const seen = new Set<string>();
  const all = lists.flat().filter((r) => (seen.has(r.id) ? false : (seen.add(r.id), true)));
  return all.sort((a, b) => Number(a.seq) - Number(b.seq)).slice(0, limit);
}
