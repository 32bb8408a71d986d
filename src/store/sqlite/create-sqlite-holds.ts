import type { CatchUpState, DispatchControl } from '../store.js';
import { CATCH_UP_COLUMNS, toCatchUp, type CatchUpRow } from '../rows.js';
import { readHolds } from './prepare-statements.js';
import type { SqliteContext } from './sqlite-context.js';

/** Dispatch holds and catch-up positions on SQLite; statements prepared on first use (a `read` store may never use them). */
export function createSqliteHolds({
  db,
  st,
  write,
  now,
  emit,
  newClaimId,
}: SqliteContext): DispatchControl & CatchUpState {
  let s: ReturnType<typeof prepare> | null = null;
  const statements = (): ReturnType<typeof prepare> => (s ??= prepare(db));
  return {
    async listHolds() {
      return readHolds(st);
    },
    async setHold(h) {
      await write(() => statements().upsertHold.run(h));
      emit({ kind: 'holds' });
    },
    async releaseHold(scope, key) {
      const released = await write(() => statements().deleteHold.run(scope, key).changes === 1);
      if (released) emit({ kind: 'holds' });
      return released;
    },
    async readInFlight() {
      return statements().inFlight.get({ now: now() }) as { runs: number; deliveries: number; heartbeats: number };
    },
    claimCatchUp({ mappingId, owner, leaseMs }) {
      return write(() => {
        const t = now();
        const claimId = newClaimId();
        const row = statements().claimCatchUp.get({ mappingId, claimId, owner, until: t + leaseMs, now: t }) as
          | CatchUpRow
          | undefined;
        return row === undefined ? null : { ...toCatchUp(row), claimId };
      });
    },
    renewCatchUp(claim, leaseMs) {
      return write(() => statements().renewCatchUp.run(now() + leaseMs, claim.mappingId, claim.claimId).changes === 1);
    },
    saveCatchUp(claim, p) {
      return write(
        () => statements().saveCatchUp.run({ ...p, mappingId: claim.mappingId, claimId: claim.claimId }).changes === 1,
      );
    },
    releaseCatchUp(claim) {
      return write(() => {
        statements().releaseCatchUp.run(claim.mappingId, claim.claimId);
      });
    },
    async listCatchUps() {
      return (statements().listCatchUps.all() as CatchUpRow[]).map(toCatchUp);
    },
  };
}

function prepare(db: SqliteContext['db']) {
  return {
    upsertHold: db.prepare(
      `INSERT INTO dispatch_holds (scope, key, kind, note, at) VALUES (@scope, @key, @kind, @note, @at)
        ON CONFLICT (scope, key) DO UPDATE SET kind = excluded.kind, note = excluded.note, at = excluded.at`,
    ),
    deleteHold: db.prepare('DELETE FROM dispatch_holds WHERE scope = ? AND key = ?'),
    // The redundant `state IN (…)` lets the partial index on open runs serve the count.
    inFlight: db.prepare(
      `SELECT
        (SELECT count(*) FROM runs WHERE state IN ('queued', 'running') AND state = 'running' AND lease_until > @now) AS runs,
        (SELECT count(*) FROM deliveries WHERE state = 'pending' AND lease_until > @now) AS deliveries,
        (SELECT count(*) FROM heartbeat_leases WHERE lease_until > @now) AS heartbeats`,
    ),
    claimCatchUp: db.prepare(
      `INSERT INTO catch_up (mapping_id, claim_id, owner, lease_until) VALUES (@mappingId, @claimId, @owner, @until)
        ON CONFLICT (mapping_id) DO UPDATE SET claim_id = excluded.claim_id, owner = excluded.owner,
          lease_until = excluded.lease_until WHERE catch_up.lease_until IS NULL OR catch_up.lease_until < @now
        RETURNING ${CATCH_UP_COLUMNS}`,
    ),
    renewCatchUp: db.prepare('UPDATE catch_up SET lease_until = ? WHERE mapping_id = ? AND claim_id = ?'),
    saveCatchUp: db.prepare(
      `UPDATE catch_up SET cursor_at = @cursorAt, last_id = @lastId, resume_after = @resumeAfter, updated_at = @at
        WHERE mapping_id = @mappingId AND claim_id = @claimId`,
    ),
    releaseCatchUp: db.prepare(
      'UPDATE catch_up SET claim_id = NULL, owner = NULL, lease_until = NULL WHERE mapping_id = ? AND claim_id = ?',
    ),
    listCatchUps: db.prepare(`SELECT ${CATCH_UP_COLUMNS} FROM catch_up ORDER BY mapping_id`),
  };
}
