import type { SubscriptionStore } from '../store.js';
import { toSubscription, TooManySubscriptionsError, type SubscriptionRow } from '../log-rows.js';
import type { ClaimedSubscription } from '../event-log-types.js';
import type { SqliteContext } from './sqlite-context.js';

const claimed = (row: SubscriptionRow, claimId: string): ClaimedSubscription => ({ ...toSubscription(row), claimId });

/** Webhook subscriptions on SQLite: one process, so a claim is fenced by its claim id under the single writer. */
export function createSqliteSubscriptions({
  db,
  write,
  emit,
  now,
  newClaimId,
}: Pick<SqliteContext, 'db' | 'write' | 'emit' | 'now' | 'newClaimId'>): SubscriptionStore & {
  expireLeases(): void;
} {
  const get = db.prepare('SELECT * FROM mcp_subscriptions WHERE id = ?');
  const all = db.prepare('SELECT * FROM mcp_subscriptions ORDER BY seq');
  const held = db.prepare("SELECT count(*) FROM mcp_subscriptions WHERE state != 'terminated'").pluck();
  const insert = db.prepare(
    `INSERT INTO mcp_subscriptions (id, name, arguments, url, secret, cursor, state, expires_at, max_age_ms, next_attempt_at,
      created_at, updated_at) VALUES (@id, @name, @argumentsJson, @url, @secret, @cursor, 'activating', @expiresAt, @maxAgeMs,
      @createdAt, @createdAt, @createdAt)`,
  );
  const renewAnew = db.prepare(
    `UPDATE mcp_subscriptions SET secret = @secret, cursor = @cursor, state = 'activating', end_reason = NULL,
      expires_at = @expiresAt, max_age_ms = @maxAgeMs, attempts = 0, next_attempt_at = @createdAt, last_error = NULL,
      delivered = 0, lease_owner = NULL, claim_id = NULL, lease_until = NULL, created_at = @createdAt,
      updated_at = @createdAt WHERE id = @id`,
  );
  const refresh = db.prepare(
    `UPDATE mcp_subscriptions SET secret = @secret, expires_at = @expiresAt, max_age_ms = @maxAgeMs, updated_at = @createdAt
      WHERE id = @id`,
  );
  const activate = db.prepare(
    "UPDATE mcp_subscriptions SET state = 'active', updated_at = ? WHERE id = ? AND state = 'activating'",
  );
  const remove = db.prepare('DELETE FROM mcp_subscriptions WHERE id = ?');
  const terminate = db.prepare(
    `UPDATE mcp_subscriptions SET state = 'terminated', end_reason = ?, attempts = 0, next_attempt_at = ?, updated_at = ?
      WHERE id = ? AND state != 'terminated'`,
  );
  const claimable = db.prepare(
    `SELECT * FROM mcp_subscriptions WHERE state IN ('active', 'terminated') AND (lease_until IS NULL OR lease_until < ?)
      ORDER BY seq LIMIT ?`,
  );
  const take = db.prepare('UPDATE mcp_subscriptions SET lease_owner = ?, claim_id = ?, lease_until = ? WHERE id = ?');
  const renew = db.prepare('UPDATE mcp_subscriptions SET lease_until = ? WHERE id = ? AND claim_id = ?');
  const release = db.prepare(
    'UPDATE mcp_subscriptions SET lease_owner = NULL, claim_id = NULL, lease_until = NULL WHERE id = ? AND claim_id = ?',
  );
  const progress = db.prepare(
    `UPDATE mcp_subscriptions SET cursor = coalesce(@cursor, cursor), delivered = delivered + @delivered, attempts = @attempts,
      next_attempt_at = @nextAttemptAt, last_error = @lastError, last_delivery_at = coalesce(@lastDeliveryAt, last_delivery_at),
      updated_at = @at WHERE id = @id AND claim_id = @claimId`,
  );
  const finish = db.prepare("DELETE FROM mcp_subscriptions WHERE id = ? AND claim_id = ? AND state = 'terminated'");
  const expire = db.prepare('UPDATE mcp_subscriptions SET lease_until = 0 WHERE lease_until IS NOT NULL');
  const row = (id: string): SubscriptionRow | undefined => get.get(id) as SubscriptionRow | undefined;

  return {
    expireLeases: () => void expire.run(),
    async saveSubscription(s, o) {
      // Refused by value, not thrown: a throw would fail the group commit's batch and retry it write by write.
      const saved = await write(() => {
        const existing = row(s.id);
        if (existing !== undefined && existing.state !== 'terminated') {
          refresh.run(s);
          return { subscription: toSubscription(row(s.id)!), created: false };
        }
        if ((held.get() as number) >= o.maxSubscriptions) return null;
        if (existing === undefined) insert.run(s);
        else renewAnew.run(s);
        return { subscription: toSubscription(row(s.id)!), created: true };
      });
      if (saved === null) throw new TooManySubscriptionsError(o.maxSubscriptions);
      return saved;
    },
    async activateSubscription(id, at) {
      const done = await write(() => activate.run(at, id).changes === 1);
      if (done) emit({ kind: 'subscriptions' });
      return done;
    },
    async getSubscription(id) {
      const r = row(id);
      return r === undefined ? null : toSubscription(r);
    },
    async listSubscriptions() {
      return (all.all() as SubscriptionRow[]).map(toSubscription);
    },
    async deleteSubscription(id) {
      const done = await write(() => remove.run(id).changes === 1);
      if (done) emit({ kind: 'subscriptions' });
      return done;
    },
    async terminateSubscription(id, reason, at) {
      const done = await write(() => terminate.run(reason, at, at, id).changes === 1);
      if (done) emit({ kind: 'subscriptions' });
      return done;
    },
    claimSubscriptions({ owner, limit, leaseMs }) {
      return write(() => {
        const t = now();
        return (claimable.all(t, limit) as SubscriptionRow[]).map((r) => {
          const claimId = newClaimId();
          take.run(owner, claimId, t + leaseMs, r.id);
          return claimed({ ...r, lease_owner: owner, lease_until: t + leaseMs }, claimId);
        });
      });
    },
    renewSubscriptions(claims, leaseMs) {
      return write(() => {
        const until = now() + leaseMs;
        return claims.filter((c) => renew.run(until, c.id, c.claimId).changes === 1).map((c) => c.id);
      });
    },
    releaseSubscription(claim) {
      return write(() => release.run(claim.id, claim.claimId).changes === 1);
    },
    recordSubscriptionProgress(p) {
      return write(
        () =>
          progress.run({
            id: p.id,
            claimId: p.claimId,
            cursor: p.cursor ?? null,
            delivered: p.delivered ?? 0,
            attempts: p.attempts,
            nextAttemptAt: p.nextAttemptAt,
            lastError: p.lastError,
            lastDeliveryAt: p.lastDeliveryAt ?? null,
            at: p.at,
          }).changes === 1,
      );
    },
    finishSubscription(claim) {
      return write(() => finish.run(claim.id, claim.claimId).changes === 1);
    },
  };
}
