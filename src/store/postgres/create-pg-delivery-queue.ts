import { toDelivery, type DeliveryRow } from '../rows.js';
import type { DeliveryQueue } from '../store.js';
import type { ClaimedDelivery } from '../types.js';
import type { PgGroupCommit } from './create-pg-group-commit.js';
import { notify, nowSql, type PgContext } from './pg-context.js';
import { readPgHolds } from './create-pg-holds.js';
import { holdsAll, pausedKeys, pausesSome } from '../dispatch-holds.js';

export function createPgDeliveryQueue(ctx: PgContext, group: PgGroupCommit): DeliveryQueue {
  const { pool, channel } = ctx;
  return {
    async addDelivery(d) {
      ctx.checkWritable();
      await group.submit({ kind: 'delivery', delivery: d });
    },
    async claimDueDeliveries({ owner, now, limit, leaseMs }) {
      ctx.checkWritable();
      const holds = await readPgHolds(pool);
      if (holdsAll(holds)) return [];
      const paused = pausedKeys(holds);
      // Deliveries of agents paused ($6) and of paused mappings' runs ($7) left out; none without pauses.
      const unheld = pausesSome(holds)
        ? `AND NOT (d.agent_id = ANY($6::text[])) AND (d.run_id IS NULL OR NOT EXISTS (
            SELECT 1 FROM runs r WHERE r.id = d.run_id AND r.hook = ANY($7::text[])))`
        : '';
      const { rows } = await pool.query(
        // New deliveries oldest first, and retries due soonest first, by `deliveries_due`: the
        // oldest of both. One condition for both would read every delivery waiting for its retry.
        `WITH n AS (SELECT ${nowSql(5)} AS now),
          fresh AS (
            SELECT d.seq FROM deliveries d, n WHERE d.state = 'pending' AND d.next_attempt_at IS NULL
              AND (d.lease_until IS NULL OR d.lease_until < n.now) ${unheld}
            ORDER BY d.seq LIMIT $2 FOR UPDATE OF d SKIP LOCKED),
          due AS (
            SELECT d.seq FROM deliveries d, n WHERE d.state = 'pending' AND d.next_attempt_at <= $1
              AND (d.lease_until IS NULL OR d.lease_until < n.now) ${unheld}
            ORDER BY d.next_attempt_at, d.seq LIMIT $2 FOR UPDATE OF d SKIP LOCKED),
          picked AS (SELECT seq FROM (SELECT seq FROM fresh UNION ALL SELECT seq FROM due) AS b ORDER BY seq LIMIT $2)
        UPDATE deliveries SET lease_owner = $3, lease_until = n.now + $4, claim_id = gen_random_uuid()::text
        FROM picked, n WHERE deliveries.seq = picked.seq RETURNING deliveries.*`,
        [
          now,
          limit,
          owner,
          leaseMs,
          ctx.clockParam(),
          ...(unheld === '' ? [] : [[...paused.agents.keys()], [...paused.hooks.keys()]]),
        ],
      );
      return (rows as Array<DeliveryRow & { claim_id: string; seq: string }>)
        .sort((a, b) => Number(a.seq) - Number(b.seq))
        .map((r): ClaimedDelivery => ({ ...toDelivery(r), claimId: r.claim_id }));
    },
    async renewDeliveries(claims, leaseMs) {
      if (claims.length === 0) return [];
      ctx.checkWritable();
      const { rows } = await pool.query(
        `UPDATE deliveries SET lease_until = ${nowSql(4)} + $3 FROM unnest($1::text[], $2::text[]) AS c (id, claim_id)
          WHERE deliveries.id = c.id AND deliveries.claim_id = c.claim_id AND deliveries.state = 'pending' RETURNING deliveries.id`,
        [claims.map((c) => c.id), claims.map((c) => c.claimId), leaseMs, ctx.clockParam()],
      );
      return (rows as Array<{ id: string }>).map((r) => r.id);
    },
    async recordDeliveryProgress(p) {
      ctx.checkWritable();
      const { rowCount } = await pool.query(
        `UPDATE deliveries SET parts_sent = $1, resolved_channel = $2, resolved_to = $3, updated_at = $4
          WHERE id = $5 AND claim_id = $6 AND state = 'pending'`,
        [p.partsSent, p.resolvedChannel, p.resolvedTo, p.at, p.deliveryId, p.claimId],
      );
      return rowCount === 1;
    },
    async recordDeliveryAttempt(r) {
      const state = r.outcome === 'retry' ? 'pending' : r.outcome;
      return ctx.tx(async (client) => {
        const { rows } = await client.query(
          `UPDATE deliveries SET state = $1, attempts = attempts + 1, error = $2, updated_at = $3, resolved_channel = $4,
            resolved_to = $5, parts_sent = $6, next_attempt_at = $7, sent_at = $8, lease_owner = NULL, lease_until = NULL,
            claim_id = NULL WHERE id = $9 AND claim_id = $10 AND state = 'pending' RETURNING run_id`,
          [
            state,
            r.error,
            r.at,
            r.resolvedChannel,
            r.resolvedTo,
            r.partsSent,
            r.nextAttemptAt,
            r.outcome === 'sent' ? r.at : null,
            r.deliveryId,
            r.claimId,
          ],
        );
        const row = rows[0] as { run_id: string | null } | undefined;
        if (row === undefined) return false;
        await client.query(
          'INSERT INTO delivery_attempts (delivery_id, attempt, at, status, error, outcome) VALUES ($1, $2, $3, $4, $5, $6)',
          [r.deliveryId, r.attempt, r.at, r.status, r.error, r.outcome],
        );
        if (r.lastRoute !== null)
          await setRoute(
            client,
            r.lastRoute.sessionKey,
            r.lastRoute.agentId,
            r.lastRoute.channel,
            r.lastRoute.to,
            r.at,
          );
        if (row.run_id !== null && state !== 'pending')
          await notify(client, channel, [{ kind: 'finished', runId: row.run_id }]);
        return true;
      });
    },
    async requeueDelivery(id, at) {
      return ctx.tx(async (client) => {
        const { rowCount } = await client.query(
          `UPDATE deliveries SET state = 'pending', attempts = 0, next_attempt_at = $1, error = NULL, updated_at = $1,
            lease_owner = NULL, lease_until = NULL, claim_id = NULL WHERE id = $2 AND state IN ('failed', 'skipped')`,
          [at, id],
        );
        if (rowCount === 1) await notify(client, channel, [{ kind: 'deliveries' }]);
        return rowCount === 1;
      });
    },
    async setLastRoute(sessionKey, agentId, ch, to, at) {
      ctx.checkWritable();
      await setRoute(pool, sessionKey, agentId, ch, to, at);
    },
  };
}

async function setRoute(
  client: { query: (text: string, values: unknown[]) => Promise<unknown> },
  sessionKey: string,
  agentId: string,
  channel: string,
  to: string,
  at: number,
): Promise<void> {
  await client.query(
    `INSERT INTO sessions (key, agent_id, last_channel, last_to, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $5)
      ON CONFLICT (key) DO UPDATE SET last_channel = excluded.last_channel, last_to = excluded.last_to, updated_at = excluded.updated_at`,
    [sessionKey, agentId, channel, to, at],
  );
}
