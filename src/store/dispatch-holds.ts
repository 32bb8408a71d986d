/**
 * Dispatch holds: an operator's pause (of everything, an agent or a mapping) and a deploy's drain,
 * kept as rows every replica's claims read, so a hold survives restarts and binds the whole fleet.
 * The ingress never reads them: requests are accepted and stored while dispatch is held.
 */

/** What a hold covers: every kind of work, one agent's, or one mapping's. */
export type HoldScope = 'all' | 'agent' | 'mapping';

/** The key of the `all` hold (there is one). */
export const ALL_KEY = '*';

/**
 * A hold on dispatch. Claims skip what it covers: an `all` hold, every run, heartbeat turn and
 * delivery; an `agent` hold, that agent's runs, heartbeat turns and deliveries; a `mapping` hold,
 * the mapping's runs and the deliveries of their replies. Work already claimed finishes.
 */
export interface DispatchHold {
  scope: HoldScope;
  /** The agent's id or the mapping's id; `*` for `all`. */
  key: string;
  /** `pause` (`hookgate pause`) or `drain` (`hookgate drain`: `all` only); both last until resumed. */
  kind: 'pause' | 'drain';
  /** What the operator said about it, if anything. */
  note: string | null;
  /** When it was set, ms since the epoch. */
  at: number;
}

/** Work claimed under a live lease now, in every process sharing the store. */
export interface InFlight {
  runs: number;
  deliveries: number;
  /** Heartbeat turns (each holds its agent's lease). */
  heartbeats: number;
}

/** A `dispatch_holds` row as both stores read it. */
export interface HoldRow {
  scope: HoldScope;
  key: string;
  kind: 'pause' | 'drain';
  note: string | null;
  at: number | string;
}

export const toHold = (r: HoldRow): DispatchHold => ({
  scope: r.scope,
  key: r.key,
  kind: r.kind,
  note: r.note,
  at: Number(r.at),
});

/** Reads every hold, in either store's SQL, in a stable order. */
export const SELECT_HOLDS = 'SELECT scope, key, kind, note, at FROM dispatch_holds ORDER BY scope, key';

/**
 * The ending every hold's reason has, as a budget's reason ends with its limit (`(runsPerHour 20)`):
 * a run's stored mark that ends with it was made by a hold (see `overlayHeld`).
 */
const PAUSED = ' (paused)';
const DRAINING = ' (draining)';

/** Why a queued run covered by `hold` waits, as the run's `heldReason` says it. */
function holdReason(hold: DispatchHold): string {
  const note = hold.note === null || hold.note === '' ? '' : `: ${hold.note}`;
  if (hold.scope === 'all') {
    return hold.kind === 'drain' ? `dispatch drained${note}${DRAINING}` : `all dispatch paused${note}${PAUSED}`;
  }
  return `${hold.scope} "${hold.key}": paused${note}${PAUSED}`;
}

/** Whether an `all` hold (a pause of everything, or a drain) is set: claims then take nothing. */
export const holdsAll = (holds: readonly DispatchHold[]): boolean => holds.some((h) => h.scope === 'all');

/**
 * The hold that covers work of `agentId` and mapping `hook` (`all` first, then the agent's, then the
 * mapping's); a heartbeat turn belongs to no mapping.
 */
export function coveringHold(
  holds: readonly DispatchHold[],
  agentId: string,
  hook: string | null = null,
): DispatchHold | undefined {
  return (
    holds.find((h) => h.scope === 'all') ??
    holds.find((h) => h.scope === 'agent' && h.key === agentId) ??
    (hook === null ? undefined : holds.find((h) => h.scope === 'mapping' && h.key === hook))
  );
}

/**
 * The agents and mappings paused, each with its runs' reason, by budget scope: what a claim's plan
 * blocks beside its budgets (see `createBudgetPlan`), and what the delivery claims leave out.
 */
export function pausedKeys(holds: readonly DispatchHold[]): Record<'agents' | 'hooks', Map<string, string>> {
  const out = { agents: new Map<string, string>(), hooks: new Map<string, string>() };
  for (const h of holds) {
    if (h.scope === 'agent') out.agents.set(h.key, holdReason(h));
    else if (h.scope === 'mapping') out.hooks.set(h.key, holdReason(h));
  }
  return out;
}

/** Whether an agent or a mapping is paused (a claim then plans around it). */
export const pausesSome = (holds: readonly DispatchHold[]): boolean => holds.some((h) => h.scope !== 'all');

/**
 * A run as the operator should see it: a queued run a hold covers says so (a hold's reason comes
 * before a budget's: lifting the budget would not start it). A mark a hold left on a queued run that
 * no hold covers any more (resumed; the claims' passes clear such marks a batch a claim) is not shown.
 */
export function overlayHeld<
  T extends { state: string; agentId: string; heldReason: string | null; source: { hook: string } },
>(run: T, holds: readonly DispatchHold[]): T {
  if (run.state !== 'queued') return run;
  const hold = coveringHold(holds, run.agentId, run.source.hook);
  if (hold !== undefined) return { ...run, heldReason: holdReason(hold) };
  const stale = run.heldReason?.endsWith(PAUSED) === true || run.heldReason?.endsWith(DRAINING) === true;
  return stale ? { ...run, heldReason: null } : run;
}

/** What `pause` and `resume` were told to select: exactly one of everything, an agent, a mapping. */
export interface HoldSelection {
  all?: boolean;
  agent?: string | undefined;
  mapping?: string | undefined;
}

/**
 * The hold a selection names, or why it names none: exactly one of `all`, `agent`, `mapping`, and
 * an agent or mapping the config knows (a held one is known too, so a hold outlives its mapping's
 * removal only until it is resumed).
 */
export function resolveHoldSelection(
  given: HoldSelection,
  known: { agents: readonly string[]; mappings: readonly string[]; held?: readonly DispatchHold[] },
): { ok: true; scope: HoldScope; key: string } | { ok: false; message: string } {
  const chosen = [given.all === true, given.agent !== undefined, given.mapping !== undefined].filter(Boolean).length;
  if (chosen !== 1) return { ok: false, message: 'name exactly one of: all, an agent, a mapping' };
  if (given.all === true) return { ok: true, scope: 'all', key: ALL_KEY };
  const scope: HoldScope = given.agent !== undefined ? 'agent' : 'mapping';
  const key = (given.agent ?? given.mapping)!;
  const ids = scope === 'agent' ? known.agents : known.mappings;
  if (ids.includes(key) || known.held?.some((h) => h.scope === scope && h.key === key) === true) {
    return { ok: true, scope, key };
  }
  return {
    ok: false,
    message: `no ${scope} "${key}" in the config (${scope === 'agent' ? 'agents' : 'mappings'}: ${ids.length === 0 ? 'none' : ids.join(', ')})`,
  };
}
