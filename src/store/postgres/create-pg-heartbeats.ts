import { SPEND_KEPT_MS } from '../run-budgets.js';
import type { HeartbeatQueue } from '../store.js';
import { insertDelivery, insertTranscript } from './create-pg-run-queue.js';
import { backlogQuery, notify, nowSql, type PgContext } from './pg-context.js';
import { HIGH, HOOK, SHAPE } from './pg-event-kind.js';

/**
 * The wait a digest turn's consumption may take beside the pool's query timeout: three times what
 * a backlog took here under load (9 s a million events).
 */
const CONSUME_TIMEOUT_MS_PER_EVENT = 0.03;

/** SQL: the event is an ordinary one of a kind in the lists `$5` (hooks) and `$6` (shapes). */
const KIND_IN_LIST = ` AND NOT ${HIGH} AND EXISTS (SELECT 1 FROM unnest($5::text[], $6::text[]) AS k(hook, shape)
  WHERE k.hook IS NOT DISTINCT FROM ${HOOK} AND k.shape = ${SHAPE})`;

/** Rolls a turn's transaction back and reports it as refused. */
class Refused extends Error {}

export function createPgHeartbeats(ctx: PgContext): HeartbeatQueue {
  const { pool, channel } = ctx;
  return {
    async claimHeartbeat({ agentId, owner, leaseMs, minIntervalMs }) {
      ctx.checkWritable();
      const { rows } = await pool.query(
        `WITH n AS (SELECT ${nowSql(4)} AS now)
        INSERT INTO heartbeat_leases (agent_id, claim_id, owner, lease_until)
          SELECT $1, gen_random_uuid()::text, $2, n.now + $3 FROM n
          WHERE ($5::bigint IS NULL OR NOT EXISTS (
            SELECT 1 FROM heartbeat_turns h WHERE h.agent_id = $1 AND h.last_turn_at > n.now - $5::bigint))
          -- A held agent takes no turn: its events wait, and its runtime asks again once it is resumed.
          AND NOT EXISTS (SELECT 1 FROM dispatch_holds d WHERE d.scope = 'all' OR (d.scope = 'agent' AND d.key = $1))
        ON CONFLICT (agent_id) DO UPDATE SET claim_id = excluded.claim_id, owner = excluded.owner,
          lease_until = excluded.lease_until
          WHERE heartbeat_leases.lease_until < (SELECT now FROM n)
        RETURNING claim_id`,
        [agentId, owner, leaseMs, ctx.clockParam(), minIntervalMs ?? null],
      );
      const row = rows[0] as { claim_id: string } | undefined;
      return row === undefined ? null : { agentId, claimId: row.claim_id };
    },
    async renewHeartbeat(claim, leaseMs) {
      ctx.checkWritable();
      const { rowCount } = await pool.query(
        `UPDATE heartbeat_leases SET lease_until = ${nowSql(4)} + $3 WHERE agent_id = $1 AND claim_id = $2`,
        [claim.agentId, claim.claimId, leaseMs, ctx.clockParam()],
      );
      return rowCount === 1;
    },
    async releaseHeartbeat(claim) {
      ctx.checkWritable();
      await pool.query('DELETE FROM heartbeat_leases WHERE agent_id = $1 AND claim_id = $2', [
        claim.agentId,
        claim.claimId,
      ]);
    },
    async recordHeartbeatTurn(t) {
      try {
        return await ctx.tx(async (client) => {
          // Holding the lease row for the transaction keeps a takeover from racing this record.
          const held = await client.query(
            'SELECT 1 FROM heartbeat_leases WHERE agent_id = $1 AND claim_id = $2 FOR UPDATE',
            [t.agentId, t.claimId],
          );
          if (held.rowCount !== 1) throw new Refused();
          const turnId = t.transcript[0]?.turnId ?? null;
          const through = t.consumeThrough ?? null;
          const throughSeq =
            through === null
              ? null
              : ((await client.query<{ seq: string }>('SELECT seq FROM system_events WHERE id = $1', [through.eventId]))
                  .rows[0]?.seq ?? null);
          if (through !== null && throughSeq === null) throw new Refused();
          /** Listed events up to the digest's last one: `through.count` takes them in. */
          let listedBelow = 0;
          if (t.consumedEventIds.length > 0) {
            const { rows } = await client.query<{ seq: string }>(
              'UPDATE system_events SET consumed_at = $1, consumed_by = $2 WHERE id = ANY($3::text[]) AND consumed_at IS NULL RETURNING seq',
              [t.at, turnId, t.consumedEventIds],
            );
            // An event another turn already consumed means this turn is a twin: write nothing.
            if (rows.length !== new Set(t.consumedEventIds).size) throw new Refused();
            if (throughSeq !== null) listedBelow = rows.filter((r) => BigInt(r.seq) <= BigInt(throughSeq)).length;
          }
          if (through !== null) {
            const kinds = through.kinds;
            // A backlog of millions takes longer than the pool's query timeout (9 s a million,
            // measured), and a turn that times out is paid again at every try.
            const { rowCount } = await client.query(
              backlogQuery(
                ctx,
                `UPDATE system_events SET consumed_at = $1, consumed_by = $2 WHERE session_key = $3 AND consumed_at IS NULL
                AND seq <= $4${kinds === undefined ? '' : KIND_IN_LIST}`,
                [
                  t.at,
                  turnId,
                  t.sessionKey,
                  throughSeq,
                  ...(kinds === undefined ? [] : [kinds.map((k) => k.hook), kinds.map((k) => k.shape)]),
                ],
                through.count,
                CONSUME_TIMEOUT_MS_PER_EVENT,
              ),
            );
            // The kinds not shown stay pending, and are counted with the rest of the backlog.
            const kept =
              kinds === undefined
                ? 0
                : Number(
                    (
                      await client.query<{ n: string }>(
                        backlogQuery(
                          ctx,
                          'SELECT count(*) AS n FROM system_events WHERE session_key = $1 AND consumed_at IS NULL AND seq <= $2',
                          [t.sessionKey, throughSeq],
                          through.count,
                          CONSUME_TIMEOUT_MS_PER_EVENT,
                        ),
                      )
                    ).rows[0]!.n,
                  );
            if (listedBelow + (rowCount ?? 0) + kept !== through.count) throw new Refused();
          }
          await insertTranscript(client, t.agentId, t.transcript, t.at);
          if (t.tokens !== undefined && t.tokens !== null && t.tokens > 0) {
            await client.query('DELETE FROM heartbeat_spend WHERE agent_id = $1 AND at < $2', [
              t.agentId,
              t.at - SPEND_KEPT_MS,
            ]);
            await client.query('INSERT INTO heartbeat_spend (agent_id, at, tokens) VALUES ($1, $2, $3)', [
              t.agentId,
              t.at,
              t.tokens,
            ]);
          }
          await client.query(
            `INSERT INTO heartbeat_turns (agent_id, last_turn_at) VALUES ($1, ${nowSql(2)})
              ON CONFLICT (agent_id) DO UPDATE SET last_turn_at = excluded.last_turn_at`,
            [t.agentId, ctx.clockParam()],
          );
          if (t.delivery !== null) {
            await insertDelivery(client, t.delivery);
            await notify(client, channel, [{ kind: 'deliveries' }]);
          }
          return true;
        });
      } catch (error) {
        if (error instanceof Refused) return false;
        throw error;
      }
    },
    async recoverExpiredHeartbeats() {
      ctx.checkWritable();
      const { rows } = await pool.query(
        `DELETE FROM heartbeat_leases WHERE agent_id IN (
          SELECT agent_id FROM heartbeat_leases WHERE lease_until < ${nowSql(1)} FOR UPDATE SKIP LOCKED)
        RETURNING agent_id`,
        [ctx.clockParam()],
      );
      return (rows as Array<{ agent_id: string }>).map((r) => r.agent_id).sort();
    },
  };
}
