import type pg from 'pg';
import {
  createBudgetPlan, createHeldRefresh, HOUR_MS, usageSince, type BudgetPlan, type BudgetScope, type BudgetUsage, type RunBudgets,
} from '../run-budgets.js';

/** Budget reads and the held-reason update for the PostgreSQL run queue. */
export interface PgBudgets {
  /**
   * Serializes budgeted claims across the fleet (until the transaction ends), so two replicas
   * never both spend a key's last room; then reads each budgeted key's usage into a claim's plan.
   */
  plan(client: pg.ClientBase, budgets: RunBudgets, now: number): Promise<BudgetPlan>;
  /** Writes each queued run's held reason (none when `plan` is `null`), as `createHeldRefresh` decides. */
  refreshHeld(client: pg.ClientBase | pg.Pool, plan: BudgetPlan | null): Promise<void>;
}

const COLUMN: Record<BudgetScope, string> = { agents: 'agent_id', hooks: 'hook' };

interface UsageRow { key: string; started: string; tokens: string; running: string }

export function createPgBudgets(): PgBudgets {
  const held = createHeldRefresh();
  return {
    async plan(client, budgets, now) {
      await client.query(`SELECT pg_advisory_xact_lock(hashtext('hookgate budgets ' || current_schema()))`);
      const usage = { agents: new Map<string, BudgetUsage>(), hooks: new Map<string, BudgetUsage>() };
      for (const scope of ['agents', 'hooks'] as const) {
        const entries = Object.entries(budgets[scope]);
        if (entries.length === 0) continue;
        const column = COLUMN[scope];
        const { rows } = await client.query(
          `SELECT k.key, w.started, w.tokens, c.running FROM unnest($1::text[], $2::bigint[]) AS k (key, since)
            CROSS JOIN LATERAL (SELECT count(*) FILTER (WHERE started_at > $3) AS started, coalesce(sum(tokens), 0) AS tokens
              FROM runs WHERE ${column} = k.key AND started_at > k.since) w
            CROSS JOIN LATERAL (SELECT count(*) AS running FROM runs
              WHERE state IN ('queued', 'running') AND state = 'running' AND ${column} = k.key) c`,
          [entries.map(([key]) => key), entries.map(([, b]) => usageSince(b, now)), now - HOUR_MS],
        );
        for (const r of rows as UsageRow[]) {
          usage[scope].set(r.key, { started: Number(r.started), tokens: Number(r.tokens), running: Number(r.running) });
        }
      }
      return createBudgetPlan(budgets, usage);
    },
    async refreshHeld(client, plan) {
      // The newest seq, read first only when budgets are in force (`after` asks for it then).
      let maxSeq = 0;
      if (plan !== null) {
        const { rows } = await client.query('SELECT max(seq) AS max FROM runs');
        maxSeq = Number((rows[0] as { max: string | null }).max ?? 0);
      }
      const rewrite = held.next(plan, () => maxSeq);
      if (rewrite === null) return;
      await client.query(
        `UPDATE runs SET held_reason = x.reason
          FROM (SELECT seq, CASE WHEN started_at IS NULL THEN COALESCE($1::jsonb ->> agent_id, $2::jsonb ->> hook)
              ELSE COALESCE($4::jsonb ->> agent_id, $5::jsonb ->> hook) END AS reason FROM runs
            WHERE state IN ('queued', 'running') AND state = 'queued' AND seq > $3) x
          WHERE runs.seq = x.seq AND runs.held_reason IS DISTINCT FROM x.reason`,
        [rewrite.agents, rewrite.hooks, rewrite.after, rewrite.restartAgents, rewrite.restartHooks],
      );
    },
  };
}
