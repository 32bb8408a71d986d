/**
 * Budgets on agent runs: how many may start per hour, how many tokens they may spend per day, and
 * (mappings) how many may run at once. A run over budget stays `queued`, held with the reason,
 * until the window allows it; both stores count usage from the runs table and decide here.
 */

export const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;
/** How long a heartbeat turn's spend is kept: the `tokensPerDay` window, with a day to spare for replicas' clocks. */
export const SPEND_KEPT_MS = 2 * DAY_MS;

export interface RunBudget {
  /** Runs that may start in any rolling hour. */
  runsPerHour?: number;
  /** Tokens (input and output, as the providers report them) that runs started in any rolling 24 h may spend. */
  tokensPerDay?: number;
  /** Runs that may be running at once. */
  maxConcurrentRuns?: number;
}

/** Budgets by agent id and by hook (a mapping's id); a run is held when either has no room. */
export interface RunBudgets {
  agents: Readonly<Record<string, RunBudget>>;
  hooks: Readonly<Record<string, RunBudget>>;
}

/**
 * What a budget's key used: runs started in the last hour, tokens of runs started in the last 24 h
 * (a start exactly a window ago has left it), runs running now.
 */
export interface BudgetUsage {
  started: number;
  tokens: number;
  running: number;
}

export type BudgetScope = 'agents' | 'hooks';

/** What each budgeted key used now, by scope and key, as `hookgate status` reports it. */
export type BudgetReport = Record<BudgetScope, Record<string, BudgetUsage>>;

/** A usage read as a report. */
export const toBudgetReport = (u: UsageByKey): BudgetReport => ({
  agents: Object.fromEntries(u.agents),
  hooks: Object.fromEntries(u.hooks),
});

/** What each budgeted key used, by scope and key (see `BudgetUsage`). */
export type UsageByKey = Record<BudgetScope, Map<string, BudgetUsage>>;

/**
 * SQL (either store): the tokens an agent's heartbeat turns spent after `since` (`key` and `since`
 * are the statement's parameters). Heartbeat turns are not held by budgets, but what they spend
 * counts against the agent's `tokensPerDay`, so its runs are held once turns and runs together
 * spent it, and its `now` wakes wait for the periodic heartbeat.
 */
export const SPENT_BY_TURNS = (key: string, since: string): string =>
  `(SELECT coalesce(sum(h.tokens), 0) FROM heartbeat_spend h WHERE h.agent_id = ${key} AND h.at > ${since})`;

/** Whether any budget is set, i.e. whether a claim must count usage at all. */
export function hasBudgets(budgets: RunBudgets | undefined): budgets is RunBudgets {
  return budgets !== undefined && (Object.keys(budgets.agents).length > 0 || Object.keys(budgets.hooks).length > 0);
}

/** How far back a key's usage must be read: a day when it has a token budget, else an hour. */
export function usageSince(budget: RunBudget, now: number): number {
  return now - (budget.tokensPerDay === undefined ? HOUR_MS : DAY_MS);
}

const LABEL: Record<BudgetScope, string> = { agents: 'agent', hooks: 'mapping' };
const n = (v: number): string => v.toLocaleString('en-US');
const runs = (v: number): string => `${n(v)} ${v === 1 ? 'run' : 'runs'}`;

/**
 * Why a key may start no run now, or `null` when it has room. A run started before (handed back at
 * shutdown, or requeued after its process died) is a `restart`: its start is already counted, so
 * `runsPerHour` does not hold it; the tokens it would spend and the runs running at once still do.
 */
export function heldReason(
  scope: BudgetScope,
  key: string,
  budget: RunBudget,
  usage: BudgetUsage,
  restart = false,
): string | null {
  const who = `${LABEL[scope]} "${key}"`;
  if (!restart && budget.runsPerHour !== undefined && usage.started >= budget.runsPerHour) {
    return `${who}: ${runs(usage.started)} started in the last hour (runsPerHour ${n(budget.runsPerHour)})`;
  }
  if (budget.tokensPerDay !== undefined && usage.tokens >= budget.tokensPerDay) {
    return `${who}: ${n(usage.tokens)} tokens spent in the last 24 h (tokensPerDay ${n(budget.tokensPerDay)})`;
  }
  if (budget.maxConcurrentRuns !== undefined && usage.running >= budget.maxConcurrentRuns) {
    return `${who}: ${runs(usage.running)} running (maxConcurrentRuns ${n(budget.maxConcurrentRuns)})`;
  }
  return null;
}

/**
 * Whether two reasons of one key name the same limit (the `(runsPerHour 20)` each ends with): they
 * then differ at most in the usage they report, such as tokens spent that age out of the window
 * while the key stays held. Two absent reasons agree; an absent and a present one do not.
 */
export function sameLimit(a: string | null, b: string | null): boolean {
  if (a === null || b === null) return a === b;
  return a.slice(a.lastIndexOf(' (')) === b.slice(b.lastIndexOf(' ('));
}

type KeyReasons = Readonly<Record<BudgetScope, ReadonlyMap<string, string>>>;

/** Blocked keys and reasons as JSON objects (`{key: reason}`), for new starts and for restarts. */
export interface HeldJson {
  agents: string;
  hooks: string;
  restartAgents: string;
  restartHooks: string;
}

export interface BudgetPlan {
  /** Keys that may start no new run now, with the reason; a claim leaves their runs queued. */
  readonly blocked: KeyReasons;
  /**
   * Keys that may not even restart a run started before (a subset of `blocked`: their tokens are
   * spent, or their runs running at once are at the limit), with the reason.
   */
  readonly blockedRestarts: KeyReasons;
  /**
   * Counts one start for a run of `agentId` and `hook`: `false` (nothing counted) when either key
   * has no room. A key whose room this start used up joins `blocked`. A run claimed again (handed
   * back, or its process died) counts as running but not as a new start, and is held only by
   * `blockedRestarts`.
   */
  take(agentId: string, hook: string | null, startedBefore?: boolean): boolean;
  /** The blocked keys and reasons, for the stores' held-reason update. */
  heldJson(): HeldJson;
}

/** No budgets: a plan made of dispatch holds alone. */
export const NO_BUDGETS: RunBudgets = { agents: {}, hooks: {} };
const NO_USAGE: UsageByKey = { agents: new Map(), hooks: new Map() };

/**
 * A claim's budget bookkeeping, from each budgeted key's usage when the claim began. Agents and
 * mappings an operator paused (`held`, with the reason) are blocked for new starts and restarts
 * alike, whatever their budgets say: their runs stay queued, marked with the pause's reason.
 */
export function createBudgetPlan(
  budgets: RunBudgets,
  usage: Readonly<Record<BudgetScope, ReadonlyMap<string, BudgetUsage>>> = NO_USAGE,
  held: Readonly<Record<BudgetScope, ReadonlyMap<string, string>>> = { agents: new Map(), hooks: new Map() },
): BudgetPlan {
  const blocked = { agents: new Map<string, string>(), hooks: new Map<string, string>() };
  const blockedRestarts = { agents: new Map<string, string>(), hooks: new Map<string, string>() };
  const used = { agents: new Map<string, BudgetUsage>(), hooks: new Map<string, BudgetUsage>() };
  const judge = (scope: BudgetScope, key: string, u: BudgetUsage): void => {
    const budget = budgets[scope][key]!;
    const reason = heldReason(scope, key, budget, u);
    if (reason !== null) blocked[scope].set(key, reason);
    const restartReason = heldReason(scope, key, budget, u, true);
    if (restartReason !== null) blockedRestarts[scope].set(key, restartReason);
  };
  for (const scope of ['agents', 'hooks'] as const) {
    for (const key of Object.keys(budgets[scope])) {
      const u = { ...(usage[scope].get(key) ?? { started: 0, tokens: 0, running: 0 }) };
      used[scope].set(key, u);
      judge(scope, key, u);
    }
    // A paused key is never taken from, so never judged again: its reason stays the pause's.
    for (const [key, reason] of held[scope]) {
      blocked[scope].set(key, reason);
      blockedRestarts[scope].set(key, reason);
    }
  }
  const count = (scope: BudgetScope, key: string | null, startedBefore: boolean): void => {
    const u = key === null ? undefined : used[scope].get(key);
    if (u === undefined || key === null) return;
    if (!startedBefore) u.started += 1;
    u.running += 1;
    judge(scope, key, u);
  };
  const json = (m: ReadonlyMap<string, string>): string => JSON.stringify(Object.fromEntries(m));
  return {
    blocked,
    blockedRestarts,
    take(agentId, hook, startedBefore = false) {
      const held = startedBefore ? blockedRestarts : blocked;
      if (held.agents.has(agentId) || (hook !== null && held.hooks.has(hook))) return false;
      count('agents', agentId, startedBefore);
      count('hooks', hook, startedBefore);
      return true;
    },
    heldJson: () => ({
      agents: json(blocked.agents),
      hooks: json(blocked.hooks),
      restartAgents: json(blockedRestarts.agents),
      restartHooks: json(blockedRestarts.hooks),
    }),
  };
}

const NONE_HELD: HeldJson = { agents: '{}', hooks: '{}', restartAgents: '{}', restartHooks: '{}' };

/** A plan's blocked keys and reasons as JSON objects; none without a plan. */
export function heldJsonOf(plan: BudgetPlan | null): HeldJson {
  return plan === null ? NONE_HELD : plan.heldJson();
}
