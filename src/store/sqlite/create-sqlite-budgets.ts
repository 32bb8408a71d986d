import type { Database } from 'better-sqlite3';
import { changedKeys, heldKeysOf, type HeldKey } from '../held-keys.js';
import {
  createBudgetPlan, heldJsonOf, HOUR_MS, usageSince, type BudgetPlan, type BudgetScope, type BudgetUsage, type RunBudgets,
} from '../run-budgets.js';

/** Budget reads and the held marks for the SQLite run queue (see held-keys.ts); statements prepared on first use. */
export interface SqliteBudgets {
  /** Each budgeted key's usage at `now`, made into a claim's plan. */
  plan(budgets: RunBudgets, now: number): BudgetPlan;
  /** The keys whose queued runs are marked held now. */
  marked(): HeldKey[];
  /**
   * Marks the queued runs held as `plan` says (none held when `null`): the runs of each key whose
   * reasons differ from `marked`, and the runs queued since the last marking.
   */
  mark(plan: BudgetPlan | null, marked: readonly HeldKey[]): void;
}

const COLUMN: Record<BudgetScope, string> = { agents: 'agent_id', hooks: 'hook' };

interface HeldKeyRow { scope: BudgetScope; key: string; reason: string; restart_reason: string | null }

export function createSqliteBudgets(db: Database): SqliteBudgets {
  let st: ReturnType<typeof prepare> | null = null;
  const statements = (): ReturnType<typeof prepare> => (st ??= prepare(db));
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
    marked() {
      return (statements().heldKeys.all() as HeldKeyRow[]).map((r) => ({ scope: r.scope, key: r.key, reason: r.reason, restartReason: r.restart_reason }));
    },
    mark(plan, marked) {
      const s = statements();
      const wanted = heldKeysOf(plan);
      const json = heldJsonOf(plan);
      const changed = changedKeys(marked, wanted);
      for (const scope of ['agents', 'hooks'] as const) for (const key of changed[scope]) s.markKey[scope].run({ ...json, key });
      if (changed.agents.length + changed.hooks.length > 0) {
        s.clearKeys.run();
        for (const k of wanted) s.insertKey.run(k.scope, k.key, k.reason, k.restartReason);
      }
      // Runs queued since the last marking arrived unmarked; with nothing held there is nothing to mark.
      const maxSeq = (s.maxSeq.pluck().get() as number | null) ?? 0;
      const after = (s.watermark.pluck().get() as number | undefined) ?? 0;
      if (maxSeq === after) return;
      if (wanted.length > 0) s.markSince.run({ ...json, after });
      s.setWatermark.run(maxSeq);
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
  // A key's marked runs by their own index; its unmarked ones among the claimable runs.
  const markKey = (column: string) => {
    const marked = db.prepare(
      `UPDATE runs SET held_reason = ${reason}
        WHERE state = 'queued' AND held_reason IS NOT NULL AND ${column} = @key AND held_reason IS NOT ${reason}`,
    );
    const unmarked = db.prepare(
      `UPDATE runs SET held_reason = ${reason} WHERE state = 'queued' AND held_reason IS NULL AND ${column} = @key AND ${reason} IS NOT NULL`,
    );
    return { run: (p: Record<string, unknown>): void => { marked.run(p); unmarked.run(p); } };
  };
  return {
    window: { agents: window(COLUMN.agents), hooks: window(COLUMN.hooks) },
    running: { agents: running(COLUMN.agents), hooks: running(COLUMN.hooks) },
    heldKeys: db.prepare('SELECT scope, key, reason, restart_reason FROM held_keys'),
    clearKeys: db.prepare('DELETE FROM held_keys'),
    insertKey: db.prepare('INSERT INTO held_keys (scope, key, reason, restart_reason) VALUES (?, ?, ?, ?)'),
    markKey: { agents: markKey(COLUMN.agents), hooks: markKey(COLUMN.hooks) },
    markSince: db.prepare(
      `UPDATE runs SET held_reason = ${reason}
        WHERE state IN ('queued', 'running') AND state = 'queued' AND seq > @after AND held_reason IS NOT ${reason}`,
    ),
    maxSeq: db.prepare('SELECT max(seq) FROM runs'),
    watermark: db.prepare('SELECT seq FROM held_watermark WHERE id = 1'),
    setWatermark: db.prepare('INSERT INTO held_watermark (id, seq) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET seq = excluded.seq'),
  };
}
