import type { RelayQueue } from '../relay-queue.js';
import { unacknowledgedReason } from '../relay-queue.js';
import {
  chooseLeased,
  RELAY_RECORD_COLUMNS,
  toLeasedRelayRequest,
  toRelayRecord,
  type LeasedRelayRow,
  type RelayRecordRow,
} from '../relay-rows.js';
import { nowOnceSql, nowSql, type PgContext } from './pg-context.js';

/** PostgreSQL's code for a unique violation. */
const UNIQUE_VIOLATION = '23505';

/**
 * The relay queue on PostgreSQL: relays sharing the database share it, and a lease takes its rows
 * `FOR UPDATE SKIP LOCKED`, so two leases at once never hand out the same request.
 */
export function createPgRelayQueue(ctx: PgContext): RelayQueue {
  const { pool } = ctx;
  const findKey = async (hook: string, key: string) => {
    const { rows } = await pool.query(
      `SELECT id, fingerprint FROM relay_requests WHERE hook = $1 AND idem_key = $2
        AND key_expires_at > ${nowOnceSql(3)}`,
      [hook, key, ctx.clockParam()],
    );
    const first = rows[0] as { id: string; fingerprint: string | null } | undefined;
    return first === undefined ? null : { id: first.id, duplicate: true as const, fingerprint: first.fingerprint };
  };
  return {
    async addRelayRequest(r) {
      ctx.checkWritable();
      if (r.key !== null) {
        const first = await findKey(r.hook, r.key);
        if (first !== null) return first;
      }
      const values = [
        r.id,
        r.hook,
        r.url,
        JSON.stringify(r.headers),
        r.body,
        r.body.length,
        r.auth,
        r.key,
        r.keyExpiresAt,
        r.fingerprint,
        r.receivedAt,
      ];
      const insert = `INSERT INTO relay_requests (id, hook, url, headers, body, bytes, auth, idem_key, key_expires_at,
        fingerprint, received_at, state) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, 'pending')`;
      const added = { id: r.id, duplicate: false as const };
      if (r.key === null) {
        await pool.query(insert, values);
        return added;
      }
      try {
        await ctx.tx(async (client) => {
          // A key whose window ended is free again.
          await client.query(
            `UPDATE relay_requests SET idem_key = NULL WHERE hook = $1 AND idem_key = $2 AND key_expires_at <= ${nowSql(3)}`,
            [r.hook, r.key, ctx.clockParam()],
          );
          await client.query(insert, values);
        });
        return added;
      } catch (error) {
        // A repeat recorded by another relay (or request) at the same moment won.
        if ((error as { code?: unknown }).code !== UNIQUE_VIOLATION) throw error;
        const first = await findKey(r.hook, r.key);
        if (first === null) throw error;
        return first;
      }
    },
    leaseRelayRequests({ leaseId, limit, maxBytes, leaseMs, maxLeases }) {
      return ctx.tx(async (client) => {
        const { rows } = await client.query(
          `SELECT seq, id, hook, url, headers, body, bytes, auth, received_at, attempts FROM relay_requests
            WHERE state = 'pending' AND (lease_until IS NULL OR lease_until < ${nowOnceSql(2)})
            ORDER BY seq LIMIT $1 FOR UPDATE SKIP LOCKED`,
          [limit, ctx.clockParam()],
        );
        const { chosen, dead } = chooseLeased(rows as LeasedRelayRow[], { maxBytes, maxLeases });
        if (dead.length > 0)
          await client.query(
            `UPDATE relay_requests SET state = 'dead', ended_at = ${nowSql(3)}, reason = $2, lease_id = NULL,
              lease_until = NULL WHERE seq = ANY($1::bigint[])`,
            [dead.map((r) => r.seq), unacknowledgedReason(maxLeases), ctx.clockParam()],
          );
        if (chosen.length > 0)
          await client.query(
            `UPDATE relay_requests SET lease_id = $2, lease_until = ${nowSql(4)} + $3, attempts = attempts + 1
              WHERE seq = ANY($1::bigint[])`,
            [chosen.map((r) => r.seq), leaseId, leaseMs, ctx.clockParam()],
          );
        return chosen.map(toLeasedRelayRequest);
      });
    },
    async ackRelayRequests({ done, refused, at }) {
      ctx.checkWritable();
      return ctx.tx(async (client) => {
        const d =
          done.length === 0
            ? 0
            : ((
                await client.query(
                  `UPDATE relay_requests SET state = 'done', ended_at = $2, body = '\\x', headers = '{}', lease_id = NULL,
                    lease_until = NULL WHERE id = ANY($1::text[]) AND state = 'pending'`,
                  [done, at],
                )
              ).rowCount ?? 0);
        let r = 0;
        for (const x of refused) {
          const { rowCount } = await client.query(
            `UPDATE relay_requests SET state = 'dead', ended_at = $2, status = $3, code = $4, reason = $5,
              lease_id = NULL, lease_until = NULL WHERE id = $1 AND state = 'pending'`,
            [x.id, at, x.status, x.code, x.reason],
          );
          r += rowCount ?? 0;
        }
        return { done: d, refused: r };
      });
    },
    async readRelayBacklog() {
      const { rows } = await pool.query(
        `WITH n AS (SELECT ${nowSql(1)} AS now) SELECT
          (SELECT count(*) FROM relay_requests WHERE state = 'pending') AS pending,
          (SELECT count(*) FROM relay_requests r, n WHERE r.state = 'pending' AND r.lease_until >= n.now) AS leased,
          (SELECT count(*) FROM relay_requests WHERE state = 'dead') AS dead,
          (SELECT received_at FROM relay_requests WHERE state = 'pending' ORDER BY seq LIMIT 1) AS oldest`,
        [ctx.clockParam()],
      );
      const row = rows[0] as { pending: number; leased: number; dead: number; oldest: number | null };
      return { pending: row.pending, leased: row.leased, dead: row.dead, oldestPendingAt: row.oldest };
    },
    async listRelayRequests({ state, limit }) {
      const { rows } =
        state === undefined
          ? await pool.query(`SELECT ${RELAY_RECORD_COLUMNS} FROM relay_requests ORDER BY seq DESC LIMIT $1`, [limit])
          : await pool.query(
              `SELECT ${RELAY_RECORD_COLUMNS} FROM relay_requests WHERE state = $1 ORDER BY seq DESC LIMIT $2`,
              [state, limit],
            );
      return (rows as RelayRecordRow[]).map(toRelayRecord);
    },
    async requeueRelayRequest(id) {
      ctx.checkWritable();
      const { rowCount } = await pool.query(
        `UPDATE relay_requests SET state = 'pending', attempts = 0, ended_at = NULL, status = NULL, code = NULL,
          reason = NULL WHERE id = $1 AND state = 'dead'`,
        [id],
      );
      return rowCount === 1;
    },
    async pruneRelay({ receivedBefore, now }, limit) {
      ctx.checkWritable();
      const byState = async (state: string): Promise<number> =>
        (
          await pool.query(
            `DELETE FROM relay_requests WHERE seq IN (SELECT seq FROM relay_requests WHERE state = $1
              AND received_at < $2 ORDER BY seq LIMIT $3)`,
            [state, receivedBefore, limit],
          )
        ).rowCount ?? 0;
      const expired = await byState('pending');
      const dead = await byState('dead');
      const { rowCount } = await pool.query(
        `DELETE FROM relay_requests WHERE seq IN (SELECT seq FROM relay_requests WHERE state = 'done'
          AND coalesce(key_expires_at, 0) <= $1 ORDER BY seq LIMIT $2)`,
        [now, limit],
      );
      return { expired, dead, done: rowCount ?? 0 };
    },
  };
}
