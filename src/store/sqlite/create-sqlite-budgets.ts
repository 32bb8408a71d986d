import type { Database } from 'better-sqlite3';
import {
  MARK_BATCH,
  nextHeldKeys,
  runPasses,
  SELECT_HELD_KEYS,
  toHeldKey,
  type HeldKey,
  type HeldKeyRow,
} from '../held-keys.js';
import {
  SPENT_BY_TURNS,
  createBudgetPlan,
  heldJsonOf,
  HOUR_MS,
  usageSince,
  type BudgetPlan,
  type BudgetScope,
  type BudgetUsage,
  type RunBudgets,
  type UsageByKey,
} from '../run-budgets.js';

/** Budget reads and the held marks for the SQLite run queue (see held-keys.ts); statements prepared on first use. */
interface SqliteBudgets {
  /** Each budgeted key's usage at `now`. */
  usage(budgets: RunBudgets, now: number): UsageByKey;
  /** Each budgeted key's usage at `now`, made into a claim's plan, with the agents and mappings paused (`held`). */
  plan(budgets: RunBudgets, now: number, held?: Parameters<typeof createBudgetPlan>[2]): BudgetPlan;
  /** The keys whose queued runs are (or are being) marked held. */
  heldKeys(): HeldKey[];
  /**
   * Marks the queued runs held as `plan` says (none held when `null`), starting from `held`: the
   * runs queued since the last marking, and a bounded batch of each pass in progress. Returns the
   * keys listed after it.
   */
  mark(plan: BudgetPlan | null, held: readonly HeldKey[]): HeldKey[];
}

const COLUMN: Record<BudgetScope, string> = { agents: 'agent_id', hooks: 'hook' };

export function createSqliteBudgets(db: Database, markBatch = MARK_BATCH): SqliteBudgets {
  let st: ReturnType<typeof prepare> | null = null;
  const statements = (): ReturnType<typeof prepare> => (st ??= prepare(db));
  const usage = (budgets: RunBudgets, now: number): UsageByKey => {
    const s = statements();
    const out: UsageByKey = { agents: new Map<string, BudgetUsage>(), hooks: new Map<string, BudgetUsage>() };
    for (const scope of ['agents', 'hooks'] as const) {
      for (const [key, budget] of Object.entries(budgets[scope])) {
        const w = s.window[scope].get({ key, since: usageSince(budget, now), hourAgo: now - HOUR_MS }) as {
          started: number;
          tokens: number;
        };
        const running = budget.maxConcurrentRuns === undefined ? 0 : (s.running[scope].pluck().get(key) as number);
        out[scope].set(key, { started: w.started, tokens: w.tokens, running });
      }
    }
    return out;
  };
  return {
    usage,
    plan: (budgets, now, held) => createBudgetPlan(budgets, usage(budgets, now), held),
    heldKeys() {
      return (statements().heldKeys.all() as HeldKeyRow[]).map(toHeldKey);
    },
    mark(plan, held) {
      const s = statements();
      const json = heldJsonOf(plan);
      const passes = runPasses(nextHeldKeys(held, plan), markBatch);
      let step = passes.next();
      while (step.done !== true) {
        const { row, limit } = step.value;
        const seqs = s.passBatch[row.phase!][row.scope].all({ key: row.key, cursor: row.cursor, limit }) as number[];
        if (seqs.length > 0) s.markSeqs.run({ ...json, seqs: JSON.stringify(seqs) });
        step = passes.next(seqs);
      }
      const { rows, changed, left } = step.value;
      if (changed) {
        s.clearKeys.run();
        for (const k of rows) s.insertKey.run(k.scope, k.key, k.reason, k.restartReason, k.phase, k.cursor);
      }
      // Runs queued since the last marking arrived unmarked (a batch of them, out of what is left);
      // with nothing held there is nothing to mark.
      const after = (s.watermark.pluck().get() as number | undefined) ?? 0;
      const maxSeq = (s.maxSeq.pluck().get() as number | null) ?? 0;
      if (maxSeq === after) return rows;
      if (!rows.some((k) => k.reason !== null)) {
        s.setWatermark.run(maxSeq);
        return rows;
      }
      const seqs = left > 0 ? (s.queuedSince.all({ after, limit: left }) as number[]) : [];
      if (seqs.length > 0) s.markSeqs.run({ ...json, seqs: JSON.stringify(seqs) });
      if (seqs.length < left) s.setWatermark.run(maxSeq);
      else if (seqs.length > 0) s.setWatermark.run(seqs[seqs.length - 1]!);
      return rows;
    },
  };
}

function prepare(db: Database) {
  // An agent's tokens are its runs' and its heartbeat turns' (see SPENT_BY_TURNS).
  const window = (column: string, turns: string) =>
    db.prepare(
      `SELECT coalesce(sum(started_at > @hourAgo), 0) AS started, coalesce(sum(tokens), 0) ${turns} AS tokens
      FROM runs WHERE ${column} = @key AND started_at > @since`,
    );
  const running = (column: string) =>
    db.prepare(
      `SELECT count(*) FROM runs WHERE state IN ('queued', 'running') AND state = 'running' AND ${column} = ?`,
    );
  // A run that started before is held only by what holds restarts (`runsPerHour` counted it once).
  const reason = `CASE WHEN runs.started_at IS NULL
    THEN coalesce((SELECT value FROM json_each(@agents) WHERE key = runs.agent_id),
      (SELECT value FROM json_each(@hooks) WHERE key = runs.hook))
    ELSE coalesce((SELECT value FROM json_each(@restartAgents) WHERE key = runs.agent_id),
      (SELECT value FROM json_each(@restartHooks) WHERE key = runs.hook)) END`;
  // A pass's batch: a key's unmarked runs among the claimable ones, its marked runs by their own index.
  const passBatch = (column: string, marked: boolean) =>
    db
      .prepare(
        `SELECT seq FROM runs WHERE state = 'queued' AND held_reason IS ${marked ? 'NOT NULL' : 'NULL'} AND ${column} = @key
      AND seq > @cursor ORDER BY seq LIMIT @limit`,
      )
      .pluck();
  const unmarked = { agents: passBatch(COLUMN.agents, false), hooks: passBatch(COLUMN.hooks, false) };
  return {
    window: { agents: window(COLUMN.agents, `+ ${SPENT_BY_TURNS('@key', '@since')}`), hooks: window(COLUMN.hooks, '') },
    running: { agents: running(COLUMN.agents), hooks: running(COLUMN.hooks) },
    heldKeys: db.prepare(SELECT_HELD_KEYS),
    clearKeys: db.prepare('DELETE FROM held_keys'),
    insertKey: db.prepare(
      'INSERT INTO held_keys (scope, key, reason, restart_reason, phase, pass_seq) VALUES (?, ?, ?, ?, ?, ?)',
    ),
    passBatch: {
      new: unmarked,
      unmarked,
      marked: { agents: passBatch(COLUMN.agents, true), hooks: passBatch(COLUMN.hooks, true) },
    },
    markSeqs: db.prepare(
      `UPDATE runs SET held_reason = ${reason} WHERE seq IN (SELECT value FROM json_each(@seqs)) AND held_reason IS NOT ${reason}`,
    ),
    // Only unmarked runs: a marked one is a listed key's, and that key's passes keep its mark right.
    queuedSince: db
      .prepare(
        "SELECT seq FROM runs WHERE state = 'queued' AND held_reason IS NULL AND seq > @after ORDER BY seq LIMIT @limit",
      )
      .pluck(),
    maxSeq: db.prepare('SELECT max(seq) FROM runs'),
    watermark: db.prepare('SELECT seq FROM held_watermark WHERE id = 1'),
    setWatermark: db.prepare(
      'INSERT INTO held_watermark (id, seq) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET seq = excluded.seq',
    ),
  };
}
