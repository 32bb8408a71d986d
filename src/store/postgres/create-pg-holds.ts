import type pg from 'pg';
import { SELECT_HOLDS, toHold, type DispatchHold, type HoldRow } from '../dispatch-holds.js';
import type { CatchUpState, DispatchControl } from '../store.js';
import { CATCH_UP_COLUMNS, toCatchUp, type CatchUpRow } from '../rows.js';
import { notify, nowSql, type PgContext } from './pg-context.js';

/** Every dispatch hold, read on `client` (in a claim's transaction: as that transaction sees them). */
export async function readPgHolds(client: pg.ClientBase | pg.Pool): Promise<DispatchHold[]> {
  return ((await client.query(SELECT_HOLDS)).rows as HoldRow[]).map(toHold);
}

/**
 * What a claim of runs must know before it chooses its path, in one round trip: the holds, and
 * whether any queued run is marked held (its marks must then be kept right, a batch a claim).
 */
export async function readClaimGate(pool: pg.Pool): Promise<{ holds: DispatchHold[]; marked: boolean }> {
  const { rows } = await pool.query(
    `SELECT EXISTS (SELECT 1 FROM held_keys) AS marked,
      (SELECT coalesce(json_agg(json_build_object('scope', scope, 'key', key, 'kind', kind, 'note', note, 'at', at)
        ORDER BY scope, key), '[]') FROM dispatch_holds) AS holds`,
  );
  const row = rows[0] as { marked: boolean; holds: HoldRow[] };
  return { marked: row.marked, holds: row.holds.map(toHold) };
}

/** Dispatch holds and catch-up positions on PostgreSQL: a change is announced to every replica. */
export function createPgHolds(ctx: PgContext): DispatchControl & CatchUpState {
  const { pool, channel } = ctx;
  return {
    listHolds: () => readPgHolds(pool),
    async setHold(h) {
      await ctx.tx(async (client) => {
        await client.query(
          `INSERT INTO dispatch_holds (scope, key, kind, note, at) VALUES ($1, $2, $3, $4, $5)
            ON CONFLICT (scope, key) DO UPDATE SET kind = excluded.kind, note = excluded.note, at = excluded.at`,
          [h.scope, h.key, h.kind, h.note, h.at],
        );
        await notify(client, channel, [{ kind: 'holds' }]);
      });
    },
    releaseHold(scope, key) {
      return ctx.tx(async (client) => {
        const { rowCount } = await client.query('DELETE FROM dispatch_holds WHERE scope = $1 AND key = $2', [
          scope,
          key,
        ]);
        if (rowCount === 1) await notify(client, channel, [{ kind: 'holds' }]);
        return rowCount === 1;
      });
    },
    async readInFlight() {
      // The redundant `state IN (…)` lets the partial index on open runs serve the count.
      const { rows } = await pool.query(
        `WITH n AS (SELECT ${nowSql(1)} AS now) SELECT
          (SELECT count(*) FROM runs r, n WHERE r.state IN ('queued', 'running') AND r.state = 'running' AND r.lease_until > n.now) AS runs,
          (SELECT count(*) FROM deliveries d, n WHERE d.state = 'pending' AND d.lease_until > n.now) AS deliveries,
          (SELECT count(*) FROM heartbeat_leases h, n WHERE h.lease_until > n.now) AS heartbeats`,
        [ctx.clockParam()],
      );
      return rows[0] as { runs: number; deliveries: number; heartbeats: number };
    },
    async claimCatchUp({ mappingId, owner, leaseMs }) {
      ctx.checkWritable();
      const { rows } = await pool.query(
        `WITH n AS (SELECT ${nowSql(4)} AS now)
        INSERT INTO catch_up (mapping_id, claim_id, owner, lease_until)
          SELECT $1, gen_random_uuid()::text, $2, n.now + $3 FROM n
        ON CONFLICT (mapping_id) DO UPDATE SET claim_id = excluded.claim_id, owner = excluded.owner,
          lease_until = excluded.lease_until
          WHERE catch_up.lease_until IS NULL OR catch_up.lease_until < (SELECT now FROM n)
        RETURNING ${CATCH_UP_COLUMNS}, claim_id`,
        [mappingId, owner, leaseMs, ctx.clockParam()],
      );
      const row = rows[0] as (CatchUpRow & { claim_id: string }) | undefined;
      return row === undefined ? null : { ...toCatchUp(row), claimId: row.claim_id };
    },
    async renewCatchUp(claim, leaseMs) {
      ctx.checkWritable();
      const { rowCount } = await pool.query(
        `UPDATE catch_up SET lease_until = ${nowSql(4)} + $3 WHERE mapping_id = $1 AND claim_id = $2`,
        [claim.mappingId, claim.claimId, leaseMs, ctx.clockParam()],
      );
      return rowCount === 1;
    },
    async saveCatchUp(claim, p) {
      ctx.checkWritable();
      const { rowCount } = await pool.query(
        `UPDATE catch_up SET cursor_at = $3, last_id = $4, resume_after = $5, updated_at = $6
          WHERE mapping_id = $1 AND claim_id = $2`,
        [claim.mappingId, claim.claimId, p.cursorAt, p.lastId, p.resumeAfter, p.at],
      );
      return rowCount === 1;
    },
    async releaseCatchUp(claim) {
      ctx.checkWritable();
      await pool.query(
        'UPDATE catch_up SET claim_id = NULL, owner = NULL, lease_until = NULL WHERE mapping_id = $1 AND claim_id = $2',
        [claim.mappingId, claim.claimId],
      );
    },
    async listCatchUps() {
      const { rows } = await pool.query(`SELECT ${CATCH_UP_COLUMNS} FROM catch_up ORDER BY mapping_id`);
      return (rows as CatchUpRow[]).map(toCatchUp);
    },
  };
}
