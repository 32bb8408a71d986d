import type pg from 'pg';
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

/** Budget reads and the held marks for the PostgreSQL run queue (see held-keys.ts). */
interface PgBudgets {
  /** Each budgeted key's usage at `now` (database clock). */
  usage(q: pg.ClientBase | pg.Pool, budgets: RunBudgets, now: number): Promise<UsageByKey>;
  /**
   * Each budgeted key's usage at `now`, made into a claim's plan with the agents and mappings paused
   * (`held`); read under the budget lock (`lockBudgets`).
   */
  plan(
    client: pg.ClientBase,
    budgets: RunBudgets,
    now: number,
    held?: Parameters<typeof createBudgetPlan>[2],
  ): Promise<BudgetPlan>;
  /** The keys whose queued runs are (or are being) marked held. */
  heldKeys(client: pg.ClientBase | pg.Pool): Promise<HeldKey[]>;
  /**
   * Marks the queued runs held as `plan` says (none held when `null`), starting from `held`: the
   * runs queued since the last marking, and a bounded batch of each pass in progress. Called under
   * the budget lock, so the marks and the keys they are made for change together. Resolves with the
   * keys listed after it.
   */
  mark(client: pg.ClientBase, plan: BudgetPlan | null, held: readonly HeldKey[]): Promise<HeldKey[]>;
}

/**
 * Takes the fleet-wide budget lock until the transaction ends: budgeted claims take turns, so two
 * replicas never both spend a key's last room, and the held marks change with their keys.
 */
export async function lockBudgets(client: pg.ClientBase): Promise<void> {
  await client.query(`SELECT pg_advisory_xact_lock(hashtext('hookgate budgets ' || current_schema()))`);
}

// A run that started before is held only by what holds restarts (`runsPerHour` counted it once).
const REASON = `CASE WHEN started_at IS NULL THEN COALESCE($1::jsonb ->> agent_id, $2::jsonb ->> hook)
  ELSE COALESCE($3::jsonb ->> agent_id, $4::jsonb ->> hook) END`;

const COLUMN: Record<BudgetScope, string> = { agents: 'agent_id', hooks: 'hook' };

interface UsageRow {
  key: string;
  started: string;
  tokens: string;
  running: string;
}
/**
 * Marks the runs `batch` selects (`SELECT seq … ORDER BY seq LIMIT …`, its parameters from `$5`) as
 * the held JSON says; the `seq`s it selected, in order.
 */
async function markSelected(
  client: pg.ClientBase,
  json: readonly string[],
  batch: string,
  params: readonly unknown[],
): Promise<number[]> {
  const { rows } = await client.query(
    `WITH batch AS (${batch}),
      marked AS (UPDATE runs SET held_reason = ${REASON} FROM batch
        WHERE runs.seq = batch.seq AND runs.held_reason IS DISTINCT FROM ${REASON} RETURNING 1)
    SELECT seq FROM batch ORDER BY seq`,
    [...json, ...params],
  );
  return (rows as Array<{ seq: string }>).map((r) => Number(r.seq));
}

export function createPgBudgets(markBatch = MARK_BATCH): PgBudgets {
  const usage = async (client: pg.ClientBase | pg.Pool, budgets: RunBudgets, now: number): Promise<UsageByKey> => {
    const out: UsageByKey = { agents: new Map<string, BudgetUsage>(), hooks: new Map<string, BudgetUsage>() };
    for (const scope of ['agents', 'hooks'] as const) {
      const entries = Object.entries(budgets[scope]);
      if (entries.length === 0) continue;
      const column = COLUMN[scope];
      const { rows } = await client.query(
        `SELECT k.key, w.started, w.tokens ${scope === 'agents' ? `+ ${SPENT_BY_TURNS('k.key', 'k.since')}` : ''} AS tokens, c.running
          FROM unnest($1::text[], $2::bigint[]) AS k (key, since)
          CROSS JOIN LATERAL (SELECT count(*) FILTER (WHERE started_at > $3) AS started, coalesce(sum(tokens), 0) AS tokens
            FROM runs WHERE ${column} = k.key AND started_at > k.since) w
          CROSS JOIN LATERAL (SELECT count(*) AS running FROM runs
            WHERE state IN ('queued', 'running') AND state = 'running' AND ${column} = k.key) c`,
        [entries.map(([key]) => key), entries.map(([, b]) => usageSince(b, now)), now - HOUR_MS],
      );
      for (const r of rows as UsageRow[]) {
        out[scope].set(r.key, { started: Number(r.started), tokens: Number(r.tokens), running: Number(r.running) });
      }
    }
    return out;
  };
  return {
    usage,
    plan: async (client, budgets, now, held) => createBudgetPlan(budgets, await usage(client, budgets, now), held),
    async heldKeys(client) {
      return ((await client.query(SELECT_HELD_KEYS)).rows as HeldKeyRow[]).map(toHeldKey);
    },
    async mark(client, plan, held) {
      const j = heldJsonOf(plan);
      const json = [j.agents, j.hooks, j.restartAgents, j.restartHooks];
      const passes = runPasses(nextHeldKeys(held, plan), markBatch);
      let step = passes.next();
      while (step.done !== true) {
        const { row, limit } = step.value;
        // A pass's batch: a key's unmarked runs among the claimable ones, its marked runs by their own index.
        step = passes.next(
          await markSelected(
            client,
            json,
            `SELECT seq FROM runs WHERE state = 'queued' AND held_reason IS ${row.phase === 'marked' ? 'NOT NULL' : 'NULL'}
            AND ${COLUMN[row.scope]} = $5 AND seq > $6 ORDER BY seq LIMIT $7`,
            [row.key, row.cursor, limit],
          ),
        );
      }
      const { rows: keys, changed, left } = step.value;
      if (changed) {
        await client.query('DELETE FROM held_keys');
        if (keys.length > 0) {
          await client.query(
            `INSERT INTO held_keys (scope, key, reason, restart_reason, phase, pass_seq)
              SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::bigint[])`,
            [
              keys.map((k) => k.scope),
              keys.map((k) => k.key),
              keys.map((k) => k.reason),
              keys.map((k) => k.restartReason),
              keys.map((k) => k.phase),
              keys.map((k) => k.cursor),
            ],
          );
        }
      }
      // Runs queued since the last marking arrived unmarked (a batch of them, out of what is left);
      // with nothing held there is nothing to mark. A run whose seq was taken before the watermark
      // but committed after it stays unmarked: claims still leave it out by its keys.
      const { rows } = await client.query(
        'SELECT (SELECT max(seq) FROM runs) AS max, (SELECT seq FROM held_watermark WHERE id = 1) AS after',
      );
      const { max, after } = rows[0] as { max: string | null; after: string | null };
      if ((max ?? '0') === (after ?? '0')) return keys;
      let upTo = max ?? '0';
      if (keys.some((k) => k.reason !== null)) {
        if (left === 0) return keys;
        // Only unmarked runs: a marked one is a listed key's, and that key's passes keep its mark right.
        const seqs = await markSelected(
          client,
          json,
          "SELECT seq FROM runs WHERE state = 'queued' AND held_reason IS NULL AND seq > $5 ORDER BY seq LIMIT $6",
          [after ?? '0', left],
        );
        if (seqs.length === left) upTo = String(seqs[seqs.length - 1]);
      }
      await client.query(
        'INSERT INTO held_watermark (id, seq) VALUES (1, $1) ON CONFLICT (id) DO UPDATE SET seq = excluded.seq',
        [upTo],
      );
      return keys;
    },
  };
}
