import type { SubscriptionStore } from '../store.js';
import type { ClaimedSubscription } from '../event-log-types.js';
import { toSubscription, TooManySubscriptionsError, type SubscriptionRow } from '../log-rows.js';
import { notify, nowSql, type PgContext } from './pg-context.js';

/** Rolls a refused subscribe back. */
class Refused extends Error {}

const claimed = (r: SubscriptionRow & { claim_id: string }): ClaimedSubscription => ({
  ...toSubscription(r),
  claimId: r.claim_id,
});

/**
 * Webhook subscriptions shared by a fleet. Claims take rows `FOR UPDATE SKIP LOCKED` with a lease
 * on the database's clock, so each subscription has one sender at a time; the subscription limit is
 * counted under an advisory lock, so replicas subscribing at once cannot pass it together.
 */
export function createPgSubscriptions(ctx: PgContext): SubscriptionStore {
  const { pool, channel } = ctx;
  const one = async (sql: string, values: unknown[]): Promise<SubscriptionRow | undefined> =>
    (await pool.query(sql, values)).rows[0] as SubscriptionRow | undefined;
  const changed = async (sql: string, values: unknown[]): Promise<boolean> => {
    ctx.checkWritable();
    return ((await pool.query(sql, values)).rowCount ?? 0) === 1;
  };
  const announce = async (done: boolean): Promise<boolean> => {
    if (done) await notify(pool, channel, [{ kind: 'subscriptions' }]);
    return done;
  };
  return {
    async saveSubscription(s, o) {
      try {
        return await ctx.tx(async (client) => {
          await client.query(`SELECT pg_advisory_xact_lock(hashtext('hookgate subscriptions ' || current_schema()))`);
          const existing = (await client.query('SELECT state FROM mcp_subscriptions WHERE id = $1 FOR UPDATE', [s.id]))
            .rows[0] as { state: string } | undefined;
          if (existing !== undefined && existing.state !== 'terminated') {
            const { rows } = await client.query(
              `UPDATE mcp_subscriptions SET secret = $2, expires_at = $3, max_age_ms = $4, updated_at = $5 WHERE id = $1 RETURNING *`,
              [s.id, s.secret, s.expiresAt, s.maxAgeMs, s.createdAt],
            );
            return { subscription: toSubscription(rows[0] as SubscriptionRow), created: false };
          }
          const { rows: held } = await client.query(
            "SELECT count(*) AS n FROM mcp_subscriptions WHERE state != 'terminated'",
          );
          if (Number((held[0] as { n: string }).n) >= o.maxSubscriptions) throw new Refused();
          const { rows } = await client.query(
            `INSERT INTO mcp_subscriptions (id, name, arguments, url, secret, cursor, state, expires_at, max_age_ms,
              next_attempt_at, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, 'activating', $7, $8, $9, $9, $9)
              ON CONFLICT (id) DO UPDATE SET secret = excluded.secret, cursor = excluded.cursor, state = 'activating',
                end_reason = NULL, expires_at = excluded.expires_at, max_age_ms = excluded.max_age_ms, attempts = 0,
                next_attempt_at = excluded.next_attempt_at, last_error = NULL, delivered = 0,
                lease_owner = NULL, claim_id = NULL, lease_until = NULL,
                created_at = excluded.created_at, updated_at = excluded.updated_at
              RETURNING *`,
            [s.id, s.name, s.argumentsJson, s.url, s.secret, s.cursor, s.expiresAt, s.maxAgeMs, s.createdAt],
          );
          return { subscription: toSubscription(rows[0] as SubscriptionRow), created: true };
        });
      } catch (error) {
        if (error instanceof Refused) throw new TooManySubscriptionsError(o.maxSubscriptions);
        throw error;
      }
    },
    async activateSubscription(id, at) {
      return announce(
        await changed(
          "UPDATE mcp_subscriptions SET state = 'active', updated_at = $2 WHERE id = $1 AND state = 'activating'",
          [id, at],
        ),
      );
    },
    async getSubscription(id) {
      const r = await one('SELECT * FROM mcp_subscriptions WHERE id = $1', [id]);
      return r === undefined ? null : toSubscription(r);
    },
    async listSubscriptions() {
      return ((await pool.query('SELECT * FROM mcp_subscriptions ORDER BY seq')).rows as SubscriptionRow[]).map(
        toSubscription,
      );
    },
    async deleteSubscription(id) {
      return announce(await changed('DELETE FROM mcp_subscriptions WHERE id = $1', [id]));
    },
    async terminateSubscription(id, reason, at) {
      return announce(
        await changed(
          `UPDATE mcp_subscriptions SET state = 'terminated', end_reason = $2, attempts = 0, next_attempt_at = $3,
            updated_at = $3 WHERE id = $1 AND state != 'terminated'`,
          [id, reason, at],
        ),
      );
    },
    async claimSubscriptions({ owner, limit, leaseMs }) {
      ctx.checkWritable();
      const { rows } = await pool.query(
        `UPDATE mcp_subscriptions SET lease_owner = $1, claim_id = gen_random_uuid()::text, lease_until = ${nowSql(4)} + $3
          WHERE seq IN (SELECT seq FROM mcp_subscriptions WHERE state IN ('active', 'terminated')
            AND (lease_until IS NULL OR lease_until < ${nowSql(4)}) ORDER BY seq LIMIT $2 FOR UPDATE SKIP LOCKED)
          RETURNING *`,
        [owner, limit, leaseMs, ctx.clockParam()],
      );
      return (rows as Array<SubscriptionRow & { claim_id: string; seq: string }>)
        .sort((a, b) => Number(a.seq) - Number(b.seq))
        .map(claimed);
    },
    async renewSubscriptions(claims, leaseMs) {
      if (claims.length === 0) return [];
      ctx.checkWritable();
      const { rows } = await pool.query(
        `UPDATE mcp_subscriptions s SET lease_until = ${nowSql(3)} + $2 FROM unnest($1::text[]) AS c (claim_id)
          WHERE s.claim_id = c.claim_id RETURNING s.id`,
        [claims.map((c) => c.claimId), leaseMs, ctx.clockParam()],
      );
      return (rows as Array<{ id: string }>).map((r) => r.id);
    },
    releaseSubscription(claim) {
      return changed(
        'UPDATE mcp_subscriptions SET lease_owner = NULL, claim_id = NULL, lease_until = NULL WHERE id = $1 AND claim_id = $2',
        [claim.id, claim.claimId],
      );
    },
    recordSubscriptionProgress(p) {
      return changed(
        `UPDATE mcp_subscriptions SET cursor = coalesce($3, cursor), delivered = delivered + $4, attempts = $5,
          next_attempt_at = $6, last_error = $7, last_delivery_at = coalesce($8, last_delivery_at), updated_at = $9
          WHERE id = $1 AND claim_id = $2`,
        [
          p.id,
          p.claimId,
          p.cursor ?? null,
          p.delivered ?? 0,
          p.attempts,
          p.nextAttemptAt,
          p.lastError,
          p.lastDeliveryAt ?? null,
          p.at,
        ],
      );
    },
    finishSubscription(claim) {
      return changed("DELETE FROM mcp_subscriptions WHERE id = $1 AND claim_id = $2 AND state = 'terminated'", [
        claim.id,
        claim.claimId,
      ]);
    },
  };
}
