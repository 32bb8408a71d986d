import type pg from 'pg';
import { changedKeys, heldKeysOf, type HeldKey } from '../held-keys.js';
import {
  createBudgetPlan, heldJsonOf, HOUR_MS, usageSince, type BudgetPlan, type BudgetScope, type BudgetUsage, type RunBudgets,
} from '../run-budgets.js';

/** Budget reads and the held marks for the PostgreSQL run queue (see held-keys.ts). */
export interface PgBudgets {
  /**
   * Serializes budgeted claims across the fleet (until the transaction ends), so two replicas
   * never both spend a key's last room; then reads each budgeted key's usage into a claim's plan.
   */
  plan(client: pg.ClientBase, budgets: RunBudgets, now: number): Promise<BudgetPlan>;
  /** The keys whose queued runs are marked held now. */
  marked(client: pg.ClientBase | pg.Pool): Promise<HeldKey[]>;
  /**
   * Marks the queued runs held as `plan` says (none held when `null`): the runs of each key whose
   * reasons differ from `marked`, and the runs queued since the last marking. Called under the
   * budget lock, so the marks and the keys they were made for change together.
   */
  mark(client: pg.ClientBase, plan: BudgetPlan | null, marked: readonly HeldKey[]): Promise<void>;
}

/** Takes the fleet-wide budget lock until the transaction ends. */
export async function lockBudgets(client: pg.ClientBase): Promise<void> {
  await client.query(`SELECT pg_advisory_xact_lock(hashtext('hookgate budgets ' || current_schema()))`);
}

// A run that started before is held only by what holds restarts (`runsPerHour` counted it once).
const REASON = `CASE WHEN started_at IS NULL THEN COALESCE($1::jsonb ->> agent_id, $2::jsonb ->> hook)
  ELSE COALESCE($3::jsonb ->> agent_id, $4::jsonb ->> hook) END`;

const COLUMN: Record<BudgetScope, string> = { agents: 'agent_id', hooks: 'hook' };

interface UsageRow { key: string; started: string; tokens: string; running: string }
interface HeldKeyRow { scope: BudgetScope; key: string; reason: string; restart_reason: string | null }

export function createPgBudgets(): PgBudgets {
  return {
    async plan(client, budgets, now) {
      await lockBudgets(client);
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
    async marked(client) {
      const { rows } = await client.query('SELECT scope, key, reason, restart_reason FROM held_keys');
      return (rows as HeldKeyRow[]).map((r) => ({ scope: r.scope, key: r.key, reason: r.reason, restartReason: r.restart_reason }));
    },
    async mark(client, plan, marked) {
      const wanted = heldKeysOf(plan);
      const j = heldJsonOf(plan);
      const json = [j.agents, j.hooks, j.restartAgents, j.restartHooks];
      const changed = changedKeys(marked, wanted);
      for (const scope of ['agents', 'hooks'] as const) {
        if (changed[scope].length === 0) continue;
        // A key's marked runs by their own index; its unmarked ones among the claimable runs.
        await client.query(
          `UPDATE runs SET held_reason = ${REASON}
            WHERE state = 'queued' AND held_reason IS NOT NULL AND ${COLUMN[scope]} = ANY($5::text[]) AND held_reason IS DISTINCT FROM ${REASON}`,
          [...json, changed[scope]],
        );
        await client.query(
          `UPDATE runs SET held_reason = ${REASON}
            WHERE state = 'queued' AND held_reason IS NULL AND ${COLUMN[scope]} = ANY($5::text[]) AND ${REASON} IS NOT NULL`,
          [...json, changed[scope]],
        );
      }
      if (changed.agents.length + changed.hooks.length > 0) {
        await client.query('DELETE FROM held_keys');
        if (wanted.length > 0) {
          await client.query(
            'INSERT INTO held_keys (scope, key, reason, restart_reason) SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[])',
            [wanted.map((k) => k.scope), wanted.map((k) => k.key), wanted.map((k) => k.reason), wanted.map((k) => k.restartReason)],
          );
        }
      }
      // Runs queued since the last marking arrived unmarked. A run whose seq was taken before the
      // watermark but committed after it stays unmarked: claims still leave it out by its keys.
      const { rows } = await client.query(
        'SELECT (SELECT max(seq) FROM runs) AS max, (SELECT seq FROM held_watermark WHERE id = 1) AS after',
      );
      const { max, after } = rows[0] as { max: string | null; after: string | null };
      if ((max ?? '0') === (after ?? '0')) return;
      if (wanted.length > 0) {
        await client.query(
          `UPDATE runs SET held_reason = ${REASON}
            WHERE state IN ('queued', 'running') AND state = 'queued' AND seq > $5 AND held_reason IS DISTINCT FROM ${REASON}`,
          [...json, after ?? '0'],
        );
      }
      await client.query(
        'INSERT INTO held_watermark (id, seq) VALUES (1, $1) ON CONFLICT (id) DO UPDATE SET seq = excluded.seq',
        [max ?? '0'],
      );
    },
  };
}
