import type { Database } from 'better-sqlite3';
import {
  createBudgetPlan, createHeldRefresh, HOUR_MS, usageSince, type BudgetPlan, type BudgetScope, type BudgetUsage, type RunBudgets,
} from '../run-budgets.js';

/** Budget reads and the held-reason update for the SQLite run queue; statements prepared on first use. */
export interface SqliteBudgets {
  /** Each budgeted key's usage at `now`, made into a claim's plan. */
  plan(budgets: RunBudgets, now: number): BudgetPlan;
  /** Writes each queued run's held reason (none when `plan` is `null`), as `createHeldRefresh` decides. */
  refreshHeld(plan: BudgetPlan | null): void;
}

const COLUMN: Record<BudgetScope, string> = { agents: 'agent_id', hooks: 'hook' };

export function createSqliteBudgets(db: Database): SqliteBudgets {
  let st: ReturnType<typeof prepare> | null = null;
  const statements = (): ReturnType<typeof prepare> => (st ??= prepare(db));
  const held = createHeldRefresh();
  return {
    plan(budgets, now) {
      const s = statements();
      const usage = { agents: new Map<string, BudgetUsage>(), hooks: new Map<string, BudgetUsage>() };
      for (const scope of ['agents', 'hooks'] as const) {
        for (const [key, budget] of Object.entries(budgets[scope])) {
          const w = s.window[scope].get({ key, since: usageSince(budget, now), hourAgo: now - HOUR_MS }) as { started: number; tokens: number };
          const running = budget.maxConcurrentRuns === undefined ? 0 : (s.running[scope].pluck().get(key) as number);
          usage[scope].set(key, { started: w.started, tokens: w.tokens, running });
        }
      }
      return createBudgetPlan(budgets, usage);
    },
    refreshHeld(plan) {
      const s = statements();
      const rewrite = held.next(plan, () => (s.maxSeq.pluck().get() as number | null) ?? 0);
      if (rewrite !== null) s.refreshHeld.run(rewrite);
    },
  };
}

function prepare(db: Database) {
  const window = (column: string) => db.prepare(
    `SELECT coalesce(sum(started_at > @hourAgo), 0) AS started, coalesce(sum(tokens), 0) AS tokens
      FROM runs WHERE ${column} = @key AND started_at > @since`,
  );
  const running = (column: string) => db.prepare(
    `SELECT count(*) FROM runs WHERE state IN ('queued', 'running') AND state = 'running' AND ${column} = ?`,
  );
  // A run that started before is held only by what holds restarts (`runsPerHour` counted it once).
  const reason = `CASE WHEN runs.started_at IS NULL
    THEN coalesce((SELECT value FROM json_each(@agents) WHERE key = runs.agent_id),
      (SELECT value FROM json_each(@hooks) WHERE key = runs.hook))
    ELSE coalesce((SELECT value FROM json_each(@restartAgents) WHERE key = runs.agent_id),
      (SELECT value FROM json_each(@restartHooks) WHERE key = runs.hook)) END`;
  return {
    window: { agents: window(COLUMN.agents), hooks: window(COLUMN.hooks) },
    running: { agents: running(COLUMN.agents), hooks: running(COLUMN.hooks) },
    maxSeq: db.prepare('SELECT max(seq) FROM runs'),
    refreshHeld: db.prepare(
      `UPDATE runs SET held_reason = ${reason}
        WHERE state IN ('queued', 'running') AND state = 'queued' AND seq > @after AND held_reason IS NOT ${reason}`,
    ),
  };
}
