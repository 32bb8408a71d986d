import type pg from 'pg';
import { toRun, type RunRow } from '../rows.js';
import { hasBudgets, NO_BUDGETS, type RunBudgets } from '../run-budgets.js';
import { holdsAll, pausedKeys, pausesSome, type DispatchHold } from '../dispatch-holds.js';
import { readClaimGate } from './create-pg-holds.js';
import { createPgBudgets, lockBudgets } from './create-pg-budgets.js';
import { marksBehind, mergeCandidates, reopenedKeys, RESTART_MARK } from '../held-keys.js';
import type { RunQueue } from '../store.js';
import type { ClaimedRun, WorkSignal } from '../types.js';
import { claimCandidates, firstCandidates } from './pg-claim-candidates.js';
import { ready } from '../ready-runs.js';
import { insertLogEvents } from './create-pg-event-log.js';
import { notify, nowSql, type PgContext } from './pg-context.js';
import { encodeSource } from '../action-source.js';

const claimed = (row: RunRow & { claim_id: string }): ClaimedRun => ({ ...toRun(row), claimId: row.claim_id });

/** A queued run (aliased `r`) whose coalescing window is over (`$4` is the lease clock). */
const WAITED = `r.state = 'queued' AND (r.coalesce_until IS NULL OR r.coalesce_until <= ${nowSql(4)})`;
/** A run (`r`) that is the first open run of its session. */
const SESSION_FIRST = `NOT EXISTS (SELECT 1 FROM runs o WHERE o.state IN ('queued', 'running') AND o.session_key = r.session_key
    AND (o.state = 'running' OR o.seq < r.seq))`;
/** Queued runs a claim may take, marked held or not: the first open run of their session. */
const READY = `${WAITED} AND ${SESSION_FIRST}`;
/**
 * The same, of the ready runs (no budget marked them held, no coalescing window holds them), read by
 * the index that leaves the others out (see held-keys.ts, ready-runs.ts).
 */
const CLAIMABLE = `${ready('r')} AND ${READY}`;
/**
 * The same among the queued first runs of their sessions `claimCandidates` found (`$n`): no need
 * to look for an earlier open run again, since a run becomes open only when queued (later `seq`s)
 * or back from running (then it was its session's first already), and the `state` check under the
 * row lock sees a head another replica claimed meanwhile. The look is left out because its plan
 * is at the mercy of the statistics: with one session holding most open runs, PostgreSQL probed
 * each candidate's session by a bitmap over every open run (26 ms a claim, measured).
 */
const CLAIMABLE_HEAD = (n: number): string => `r.seq = ANY($${n}::bigint[]) AND r.held_reason IS NULL AND ${WAITED}`;
/**
 * Agents and hooks a budget blocks left out (`$2`, `$3` for new starts; `$5`, `$6`, the keys that
 * block restarts, for a run that started before, handed back or requeued).
 */
const NOT_BLOCKED = `NOT (r.agent_id = ANY(CASE WHEN r.started_at IS NULL THEN $2::text[] ELSE $5::text[] END))
  AND (r.hook IS NULL OR NOT (r.hook = ANY(CASE WHEN r.started_at IS NULL THEN $3::text[] ELSE $6::text[] END)))`;

/** Claims the runs of a `picked (seq)` CTE for owner `$2`, lease `$3` ms, beside a `n (now)` CTE. */
const CLAIM_PICKED = `UPDATE runs SET state = 'running', attempts = runs.attempts + 1, started_at = COALESCE(runs.started_at, n.now),
    lease_owner = $2, lease_until = n.now + $3, claim_id = gen_random_uuid()::text, held_reason = NULL
  FROM picked, n WHERE runs.seq = picked.seq AND runs.state = 'queued'
  RETURNING runs.*`;

interface Candidate {
  id: string;
  seq: string;
  agent_id: string;
  hook: string | null;
  started_at: string | null;
}

const sortClaimed = (rows: unknown[]): ClaimedRun[] =>
  (rows as Array<RunRow & { claim_id: string; seq: string }>)
    .sort((a, b) => Number(a.seq) - Number(b.seq))
    .map(claimed);

export function createPgRunQueue(ctx: PgContext, markBatch?: number, claimScan?: number): RunQueue {
  const { pool, channel } = ctx;
  const budgeting = createPgBudgets(markBatch);

  /**
   * A claim under budgets, or with held marks still listed: under the fleet-wide budget lock, usage
   * read into a plan, candidates selected with blocked keys left out (for a run started before, the
   * keys that block restarts) from the unmarked runs and the marked runs of keys let through again,
   * and a run whose start uses up its key's room blocks that key's later runs (selected again
   * without them). The held marks follow; while they are behind, more work is announced.
   */
  const claimHeld = async (
    client: pg.PoolClient,
    {
      owner,
      limit,
      leaseMs,
      budgets,
      holds,
    }: { owner: string; limit: number; leaseMs: number; budgets: RunBudgets | null; holds: readonly DispatchHold[] },
  ): Promise<ClaimedRun[]> => {
    await lockBudgets(client);
    const {
      rows: [n],
    } = await client.query(`SELECT ${nowSql(1)} AS now`, [ctx.clockParam()]);
    const plan =
      budgets === null && !pausesSome(holds)
        ? null
        : await budgeting.plan(client, budgets ?? NO_BUDGETS, Number((n as { now: string }).now), pausedKeys(holds));
    const held = await budgeting.heldKeys(client);
    const runs: ClaimedRun[] = [];
    const keys = (m: ReadonlyMap<string, string> | undefined): string[] => (m === undefined ? [] : [...m.keys()]);
    /** Claims from `among` (see claimCandidates) and the marked runs of keys let through again, none past `through`. */
    const claimFrom = async (among: number[] | null, through: number): Promise<void> => {
      for (;;) {
        const params = [
          limit - runs.length,
          keys(plan?.blocked.agents),
          keys(plan?.blocked.hooks),
          ctx.clockParam(),
          keys(plan?.blockedRestarts.agents),
          keys(plan?.blockedRestarts.hooks),
        ];
        const select = async (where: string, extra?: string | number[]): Promise<Candidate[]> =>
          (
            await client.query(
              `SELECT r.id, r.seq, r.agent_id, r.hook, r.started_at FROM runs r WHERE ${where} AND ${NOT_BLOCKED}
            ORDER BY r.seq LIMIT $1 FOR UPDATE SKIP LOCKED`,
              extra === undefined ? params : [...params, extra],
            )
          ).rows as Candidate[];
        // Many sessions: every unmarked run, unless held runs are still being marked (see marksBehind).
        const lists = [
          among === null
            ? marksBehind(held, plan)
              ? []
              : await select(CLAIMABLE)
            : among.length === 0
              ? []
              : await select(CLAIMABLE_HEAD(7), among),
        ];
        const reopened = reopenedKeys(held, plan);
        for (const scope of ['agents', 'hooks'] as const) {
          const column = scope === 'agents' ? 'agent_id' : 'hook';
          for (const key of reopened[scope])
            lists.push(await select(`r.${column} = $7 AND r.held_reason IS NOT NULL AND ${READY}`, key));
        }
        const candidates = mergeCandidates(lists, limit - runs.length).filter((r) => Number(r.seq) <= through);
        const taken = candidates
          .filter((r) => plan === null || plan.take(r.agent_id, r.hook, r.started_at !== null))
          .map((r) => r.seq);
        if (taken.length > 0) {
          const res = await client.query(
            `WITH n AS (SELECT ${nowSql(4)} AS now), picked AS (SELECT unnest($1::bigint[]) AS seq) ${CLAIM_PICKED}`,
            [taken, owner, leaseMs, ctx.clockParam()],
          );
          runs.push(...sortClaimed(res.rows));
        }
        if (taken.length === candidates.length || runs.length >= limit) break;
      }
    };
    // The first few ready runs, then, when they held too few for the claim, the full read.
    const first = await firstCandidates(client, { limit: null, clock: ctx.clockParam(), scan: claimScan });
    await claimFrom(first.found, first.whole ? Infinity : first.through);
    if (runs.length < limit && !first.whole)
      await claimFrom(
        await claimCandidates(client, { limit: null, clock: ctx.clockParam(), scan: claimScan }),
        Infinity,
      );
    if (marksBehind(await budgeting.mark(client, plan, held), plan)) await notify(client, channel, [{ kind: 'runs' }]);
    return runs.sort((a, b) => a.createdAt - b.createdAt);
  };

  return {
    async claimRuns({ owner, limit, leaseMs, budgets }) {
      ctx.checkWritable();
      const gate = await readClaimGate(pool);
      // Everything held (a pause of all, a drain): nothing is claimed, nothing marked.
      if (holdsAll(gate.holds)) return [];
      // Without budgets or pauses, marks an earlier configuration left are cleared, a batch a claim.
      if (hasBudgets(budgets) || pausesSome(gate.holds) || gate.marked) {
        return ctx.tx((client) =>
          claimHeld(client, {
            owner,
            limit,
            leaseMs,
            budgets: hasBudgets(budgets) ? budgets : null,
            holds: gate.holds,
          }),
        );
      }
      // SKIP LOCKED: replicas claiming at once take different runs. A run is claimable only when no
      // run of its session is running or queued before it; the redundant `state IN (…)` terms let
      // the partial indexes on open runs serve the query.
      // The first few ready runs, then, when they hold too few, the full read.
      const first = await firstCandidates(pool, { limit, clock: ctx.clockParam(), scan: claimScan });
      const among =
        first.whole || first.found.length >= limit
          ? first.found
          : await claimCandidates(pool, { limit, clock: ctx.clockParam(), scan: claimScan });
      if (among?.length === 0) return [];
      const { rows } = await pool.query(
        `WITH n AS (SELECT ${nowSql(4)} AS now),
          picked AS (
            SELECT r.seq FROM runs r
            WHERE ${among === null ? CLAIMABLE : CLAIMABLE_HEAD(5)}
            ORDER BY r.seq LIMIT $1 FOR UPDATE SKIP LOCKED)
        ${CLAIM_PICKED}`,
        [limit, owner, leaseMs, ctx.clockParam(), ...(among === null ? [] : [among])],
      );
      return sortClaimed(rows);
    },
    async renewRuns(claims, leaseMs) {
      if (claims.length === 0) return [];
      ctx.checkWritable();
      const { rows } = await pool.query(
        `UPDATE runs SET lease_until = ${nowSql(4)} + $3
          FROM unnest($1::text[], $2::text[]) AS c (id, claim_id)
          WHERE runs.id = c.id AND runs.claim_id = c.claim_id AND runs.state = 'running' RETURNING runs.id`,
        [claims.map((c) => c.id), claims.map((c) => c.claimId), leaseMs, ctx.clockParam()],
      );
      return (rows as Array<{ id: string }>).map((r) => r.id);
    },
    async releaseRun(claim) {
      return ctx.tx(async (client) => {
        // The held keys are read as the claims leave them (see RESTART_MARK): a key a claim lets go
        // meanwhile must not leave this run a mark nothing clears.
        await lockBudgets(client);
        const { rowCount } = await client.query(
          `UPDATE runs SET state = 'queued', attempts = attempts - 1, lease_owner = NULL, lease_until = NULL, claim_id = NULL,
            ${RESTART_MARK} WHERE id = $1 AND claim_id = $2 AND state = 'running'`,
          [claim.id, claim.claimId],
        );
        if (rowCount === 1) await notify(client, channel, [{ kind: 'runs' }]);
        return rowCount === 1;
      });
    },
    async completeRun(c) {
      return ctx.tx(async (client) => {
        const { rowCount } = await client.query(
          `UPDATE runs SET state = $1, finished_at = $2, model_used = $3, reply = $4, error = $5, tokens = $8, lease_owner = NULL,
            lease_until = NULL, claim_id = NULL WHERE id = $6 AND state = 'running' AND claim_id = $7`,
          [c.state, c.finishedAt, c.model, c.reply, c.error, c.runId, c.claimId, c.tokens ?? null],
        );
        if (rowCount !== 1) return false;
        await insertTranscript(client, c.summary.agentId, c.transcript, c.finishedAt);
        const s = c.summary;
        await client.query(
          `INSERT INTO system_events (id, agent_id, session_key, text, mode, source, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
          [s.id, s.agentId, s.sessionKey, s.text, s.mode, encodeSource(s.source), s.createdAt],
        );
        const signals: WorkSignal[] = [{ kind: 'runs' }, { kind: 'finished', runId: c.runId }];
        if (c.delivery !== null) {
          await insertDelivery(client, c.delivery);
          signals.push({ kind: 'deliveries' });
        }
        if (s.mode === 'now') signals.push({ kind: 'heartbeat', agentId: s.agentId });
        if (c.published !== undefined) {
          await insertLogEvents(client, [c.published]);
          signals.push({ kind: 'published' });
        }
        await notify(client, channel, signals);
        return true;
      });
    },
    async recoverExpiredRuns({ owner, maxAttempts, leaseMs }) {
      return ctx.tx(async (client) => {
        const { rows } = await client.query(
          `WITH n AS (SELECT ${nowSql(1)} AS now)
          SELECT r.* FROM runs r, n WHERE r.state IN ('queued', 'running') AND r.state = 'running' AND r.lease_until < n.now
            ORDER BY r.seq FOR UPDATE OF r SKIP LOCKED`,
          [ctx.clockParam()],
        );
        const expired = rows as RunRow[];
        const requeue = expired.filter((r) => r.attempts < maxAttempts).map((r) => r.id);
        const abandon = expired.filter((r) => r.attempts >= maxAttempts).map((r) => r.id);
        if (requeue.length > 0) {
          await lockBudgets(client);
          await client.query(
            `UPDATE runs SET state = 'queued', lease_owner = NULL, lease_until = NULL, claim_id = NULL, ${RESTART_MARK}
              WHERE id = ANY($1::text[]) AND state = 'running'`,
            [requeue],
          );
          await notify(client, channel, [{ kind: 'runs' }]);
        }
        let abandoned: ClaimedRun[] = [];
        if (abandon.length > 0) {
          const res = await client.query(
            `UPDATE runs SET lease_owner = $2, lease_until = ${nowSql(4)} + $3, claim_id = gen_random_uuid()::text
              WHERE id = ANY($1::text[]) AND state = 'running' RETURNING *`,
            [abandon, owner, leaseMs, ctx.clockParam()],
          );
          abandoned = (res.rows as Array<RunRow & { claim_id: string; seq: string }>)
            .sort((a, b) => Number(a.seq) - Number(b.seq))
            .map(claimed);
        }
        return { requeued: requeue, abandoned };
      });
    },
  };
}

/** Appends transcript entries and touches their sessions. */
export async function insertTranscript(
  client: { query: (text: string, values: unknown[]) => Promise<unknown> },
  agentId: string,
  entries: ReadonlyArray<{ sessionKey: string; role: string; content: string; turnId: string; createdAt: number }>,
  at: number,
): Promise<void> {
  if (entries.length === 0) return;
  await client.query(
    `INSERT INTO transcript (session_key, role, content, turn_id, created_at)
      SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[])`,
    [
      entries.map((t) => t.sessionKey),
      entries.map((t) => t.role),
      entries.map((t) => t.content),
      entries.map((t) => t.turnId),
      entries.map((t) => t.createdAt),
    ],
  );
  await client.query(
    `INSERT INTO sessions (key, agent_id, created_at, updated_at) SELECT k, $2, $3, $3 FROM unnest($1::text[]) AS k
      ON CONFLICT (key) DO UPDATE SET updated_at = excluded.updated_at`,
    [[...new Set(entries.map((t) => t.sessionKey))], agentId, at],
  );
}

/** Inserts a delivery request as `pending`. */
export async function insertDelivery(
  client: { query: (text: string, values: unknown[]) => Promise<unknown> },
  d: {
    id: string;
    agentId: string;
    channel: string;
    to: string | null;
    text: string;
    runId: string | null;
    createdAt: number;
  },
): Promise<void> {
  await client.query(
    `INSERT INTO deliveries (id, state, agent_id, channel, recipient, text, run_id, created_at, updated_at)
      VALUES ($1, 'pending', $2, $3, $4, $5, $6, $7, $7)`,
    [d.id, d.agentId, d.channel, d.to, d.text, d.runId, d.createdAt],
  );
}
