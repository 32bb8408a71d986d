import type { Database } from 'better-sqlite3';
import type { NewDelivery, NewLogEvent, NewRun, NewSystemEvent, TranscriptEntry } from '../types.js';
import { logEventValues } from '../log-rows.js';
import { RESTART_MARK } from '../held-keys.js';
import { letInDue, ready, windowEnded } from '../ready-runs.js';
import { EVENT_COLUMNS, PENDING } from './consumed-marks-sql.js';
import { limitedStatements } from './limited-statements.js';
import { SELECT_HOLDS, toHold, type DispatchHold, type HoldRow } from '../dispatch-holds.js';

/**
 * The queued runs a claim may take, in `seq` order, with the agents and hooks a budget blocks left
 * out (JSON arrays, `[]` for none): for new starts, and for runs that started before (handed back
 * or requeued) the keys that block restarts. A coalescing run waits until its window has collected
 * the burst, and a run waits behind its session's earlier runs. `selectClaimable` reads only runs
 * no budget marked held, by an index that leaves the marked ones out (see held-keys.ts);
 * `selectReopened` reads the marked runs of one agent or hook whose budget lets them through again.
 */
function claimableStatements(db: Database) {
  const session = `NOT EXISTS (SELECT 1 FROM runs o WHERE o.state IN ('queued', 'running') AND o.session_key = r.session_key
      AND (o.state = 'running' OR o.seq < r.seq))`;
  const filters = `(r.coalesce_until IS NULL OR r.coalesce_until <= @now)
    AND r.agent_id NOT IN (SELECT value FROM json_each(CASE WHEN r.started_at IS NULL THEN @agents ELSE @restartAgents END))
    AND (r.hook IS NULL OR r.hook NOT IN (SELECT value FROM json_each(CASE WHEN r.started_at IS NULL THEN @hooks ELSE @restartHooks END)))
    AND ${session}`;
  // Limits are written into the text (limited-statements.ts): (limit, scan) and (limit).
  const claimable = (where: string) =>
    limitedStatements(
      db,
      (limit, scan) => `SELECT r.* FROM (SELECT seq FROM runs WHERE ${ready()} ORDER BY seq LIMIT ${scan}) AS p
        JOIN runs r ON r.seq = p.seq WHERE ${where} ORDER BY p.seq LIMIT ${limit}`,
    );
  const reopened = (column: string) =>
    limitedStatements(
      db,
      (limit) => `SELECT r.* FROM runs r WHERE r.state = 'queued' AND r.${column} = @key AND r.held_reason IS NOT NULL
      AND ${filters} ORDER BY r.seq LIMIT ${limit}`,
    );
  return {
    /** Lets in a batch of the runs whose coalescing window ended (see ready-runs.ts). */
    letInDue: limitedStatements(db, (limit) => letInDue('@now', String(limit))),
    /** Whether a run's coalescing window has ended: most claims find none, and a read costs less than the update. */
    anyDue: db.prepare(`SELECT 1 FROM runs WHERE ${windowEnded('@now')} LIMIT 1`).pluck(),
    // The oldest `scan` ready runs only: a claim must not read every run queued behind a busy
    // session. When they hold too few, the claim looks session by session, or at everything.
    // Ordered by `p.seq`, the order the ready runs are read in, so the claim stops at `limit`
    // runs; ordered by `r.seq` (the same value), SQLite sorted all `scan` of them first (3 ms a
    // claim with a thousand runs ready).
    selectClaimable: claimable(filters),
    /** `selectClaimable` when no budget blocks a key: its key filters (a JSON table a row) left out. */
    selectClaimableUnbudgeted: claimable(session),
    /** Whether more than `@scan` ready runs are queued. */
    moreClaimable: db.prepare(`SELECT 1 FROM runs WHERE ${ready()} ORDER BY seq LIMIT 1 OFFSET @scan`).pluck(),
    /** The sessions with open runs, at most `max`, skipping along the session index (a lookup a session). */
    openSessions: limitedStatements(
      db,
      (max) => `WITH RECURSIVE s (key) AS (
          SELECT (SELECT min(session_key) FROM runs INDEXED BY runs_open_session WHERE state IN ('queued', 'running'))
          UNION ALL
          SELECT (SELECT min(session_key) FROM runs INDEXED BY runs_open_session WHERE state IN ('queued', 'running') AND session_key > s.key)
            FROM s WHERE s.key IS NOT NULL)
        SELECT key FROM s WHERE key IS NOT NULL LIMIT ${max}`,
    ),
    /** The claimable among the oldest open runs of the sessions `@keys` (a JSON array). */
    selectSessionHeads: limitedStatements(
      db,
      (limit) => `SELECT r.* FROM json_each(@keys) AS k
        JOIN runs r ON r.seq = (SELECT min(o.seq) FROM runs o WHERE o.state IN ('queued', 'running') AND o.session_key = k.value)
        WHERE r.state = 'queued' AND r.held_reason IS NULL AND ${filters} ORDER BY r.seq LIMIT ${limit}`,
    ),
    /** Every ready run, read in `seq` order until enough are found. */
    selectClaimableAll: limitedStatements(
      db,
      (limit) => `SELECT r.* FROM runs r WHERE ${ready('r')} AND ${filters} ORDER BY r.seq LIMIT ${limit}`,
    ),
    selectReopened: { agents: reopened('agent_id'), hooks: reopened('hook') },
  };
}

/**
 * Every statement the SQLite store runs, prepared once. The write helpers are synchronous and
 * meant to run inside a group-commit transaction.
 */
/** Pending deliveries due at `@now`, at most `limit` (written in: limited-statements.ts), with `extra` conditions. */
const dueDeliveries =
  (extra: string) =>
  (limit: number): string =>
    `SELECT * FROM (
    SELECT * FROM (SELECT * FROM deliveries WHERE state = 'pending' AND next_attempt_at IS NULL
      AND (lease_until IS NULL OR lease_until < @now) ${extra} ORDER BY seq LIMIT ${limit})
    UNION ALL
    SELECT * FROM (SELECT * FROM deliveries WHERE state = 'pending' AND next_attempt_at <= @now
      AND (lease_until IS NULL OR lease_until < @now) ${extra} ORDER BY next_attempt_at, seq LIMIT ${limit}))
  ORDER BY seq LIMIT ${limit}`;

export function prepareStatements(db: Database) {
  const s = {
    insertEvent: db.prepare(
      'INSERT INTO system_events (id, agent_id, session_key, text, mode, source, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
    ),
    insertRun: db.prepare(
      `INSERT INTO runs (id, state, agent_id, session_key, message, name, wake_mode, deliver, channel, recipient,
        model, thinking, timeout_seconds, source, created_at, coalesce_key, coalesce_until, hook)
        VALUES (?, 'queued', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    joinCoalesced: db.prepare(
      `UPDATE runs SET message = message || @separator || @message WHERE seq = (SELECT seq FROM runs
        WHERE state = 'queued' AND coalesce_key = @key AND coalesce_until > @now ORDER BY seq DESC LIMIT 1)
        AND length(message) + @growth <= @max RETURNING id`,
    ),
    claimIdempotencyKey: db.prepare(
      `INSERT INTO idempotency_keys (hook, key, status, body, created_at, expires_at, fingerprint)
        VALUES (@hook, @key, @status, @body, @createdAt, @expiresAt, @fingerprint)
        ON CONFLICT (hook, key) DO UPDATE SET status = excluded.status, body = excluded.body,
        created_at = excluded.created_at, expires_at = excluded.expires_at, fingerprint = excluded.fingerprint
        WHERE idempotency_keys.expires_at <= @now`,
    ),
    setIdempotencyBody: db.prepare('UPDATE idempotency_keys SET body = ? WHERE hook = ? AND key = ?'),
    selectIdempotencyKey: db.prepare('SELECT * FROM idempotency_keys WHERE hook = ? AND key = ? AND expires_at > ?'),
    selectEvents: limitedStatements(
      db,
      (limit) => `SELECT ${EVENT_COLUMNS('e')} FROM system_events e ORDER BY e.seq DESC LIMIT ${limit}`,
    ),
    selectRun: db.prepare('SELECT * FROM runs WHERE id = ?'),
    ...claimableStatements(db),
    claimRun: db.prepare(
      `UPDATE runs SET state = 'running', attempts = attempts + 1, started_at = COALESCE(started_at, @now),
        lease_owner = @owner, lease_until = @until, claim_id = @claimId, held_reason = NULL WHERE id = @id AND state = 'queued'`,
    ),
    releaseRun: db.prepare(
      `UPDATE runs SET state = 'queued', attempts = attempts - 1, lease_owner = NULL, lease_until = NULL, claim_id = NULL,
        ${RESTART_MARK} WHERE id = ? AND claim_id = ? AND state = 'running'`,
    ),
    renewRun: db.prepare("UPDATE runs SET lease_until = ? WHERE id = ? AND claim_id = ? AND state = 'running'"),
    finishRun: db.prepare(
      `UPDATE runs SET state = ?, finished_at = ?, model_used = ?, reply = ?, error = ?, tokens = ?, lease_owner = NULL,
        lease_until = NULL, claim_id = NULL WHERE id = ? AND state = 'running' AND claim_id = ?`,
    ),
    selectExpired: db.prepare(
      "SELECT * FROM runs WHERE state IN ('queued', 'running') AND state = 'running' AND lease_until < ? ORDER BY seq",
    ),
    requeueRun: db.prepare(
      `UPDATE runs SET state = 'queued', lease_owner = NULL, lease_until = NULL, claim_id = NULL, ${RESTART_MARK}
        WHERE id = ? AND state = 'running'`,
    ),
    reclaimRun: db.prepare(
      "UPDATE runs SET lease_owner = @owner, lease_until = @until, claim_id = @claimId WHERE id = @id AND state = 'running'",
    ),
    expireRunLeases: db.prepare(
      "UPDATE runs SET lease_until = 0 WHERE state IN ('queued', 'running') AND state = 'running'",
    ),
    selectPending: limitedStatements(
      db,
      (limit) =>
        `SELECT * FROM system_events e WHERE e.session_key = @key AND ${PENDING('e', '@key')} ORDER BY e.seq LIMIT ${limit}`,
    ),
    selectPendingNow: db.prepare(
      `SELECT 1 FROM system_events e WHERE e.session_key = @key AND ${PENDING('e', '@key')} AND e.mode = 'now' LIMIT 1`,
    ),
    eventSeq: db.prepare('SELECT seq FROM system_events WHERE id = ?'),
    countPendingThrough: db.prepare(
      `SELECT count(*) AS n FROM system_events e WHERE e.session_key = @key AND ${PENDING('e', '@key')} AND e.seq <= @seq`,
    ),
    addConsumedMark: db.prepare(
      'INSERT INTO consumed_marks (session_key, seq, turn_id, at, filtered) VALUES (@key, @seq, @turnId, @at, @filtered)',
    ),
    addConsumedMarkKind: db.prepare(
      'INSERT INTO consumed_mark_kinds (mark_id, session_key, mark_seq, hook, shape) VALUES (@markId, @key, @seq, @hook, @shape)',
    ),
    consumeEvent: db.prepare(
      `UPDATE system_events AS e SET consumed_at = ?, consumed_by = ? WHERE e.id = ? AND ${PENDING('e')}`,
    ),
    claimHeartbeat: db.prepare(
      `INSERT INTO heartbeat_leases (agent_id, claim_id, owner, lease_until) VALUES (@agentId, @claimId, @owner, @until)
        ON CONFLICT (agent_id) DO UPDATE SET claim_id = excluded.claim_id, owner = excluded.owner,
        lease_until = excluded.lease_until WHERE heartbeat_leases.lease_until < @now`,
    ),
    recentHeartbeatTurn: db.prepare('SELECT 1 FROM heartbeat_turns WHERE agent_id = ? AND last_turn_at > ?'),
    /** A heartbeat turn's tokens; its agent's rows older than a day go (`@before`). */
    addHeartbeatSpend: db.prepare('INSERT INTO heartbeat_spend (agent_id, at, tokens) VALUES (@agentId, @at, @tokens)'),
    pruneHeartbeatSpend: db.prepare('DELETE FROM heartbeat_spend WHERE agent_id = @agentId AND at < @before'),
    noteHeartbeatTurn: db.prepare(
      `INSERT INTO heartbeat_turns (agent_id, last_turn_at) VALUES (?, ?)
        ON CONFLICT (agent_id) DO UPDATE SET last_turn_at = excluded.last_turn_at`,
    ),
    renewHeartbeat: db.prepare('UPDATE heartbeat_leases SET lease_until = ? WHERE agent_id = ? AND claim_id = ?'),
    releaseHeartbeat: db.prepare('DELETE FROM heartbeat_leases WHERE agent_id = ? AND claim_id = ?'),
    holdsHeartbeat: db.prepare('SELECT 1 FROM heartbeat_leases WHERE agent_id = ? AND claim_id = ?'),
    selectExpiredHeartbeats: db.prepare(
      'SELECT agent_id FROM heartbeat_leases WHERE lease_until < ? ORDER BY agent_id',
    ),
    deleteHeartbeat: db.prepare('DELETE FROM heartbeat_leases WHERE agent_id = ? AND lease_until < ?'),
    expireHeartbeatLeases: db.prepare('UPDATE heartbeat_leases SET lease_until = 0'),
    expireCatchUpLeases: db.prepare('UPDATE catch_up SET lease_until = 0 WHERE lease_until IS NOT NULL'),
    selectAuthFailures: db.prepare('SELECT failures, locked_until FROM auth_failures WHERE client = ?'),
    upsertAuthFailures: db.prepare(
      `INSERT INTO auth_failures (client, failures, locked_until, updated_at) VALUES (@client, @failures, @lockedUntil, @now)
        ON CONFLICT (client) DO UPDATE SET failures = excluded.failures, locked_until = excluded.locked_until,
        updated_at = excluded.updated_at`,
    ),
    // `locked_until > 0` names the partial index of locked clients, which a bare comparison does not.
    selectLockouts: db.prepare(
      'SELECT client, locked_until FROM auth_failures WHERE locked_until > 0 AND locked_until > ? ORDER BY locked_until DESC LIMIT ?',
    ),
    // A few of the oldest stale rows a failure, by `auth_failures_expiry` (see create-pg-lockouts.ts).
    pruneAuthFailures: db.prepare(
      `DELETE FROM auth_failures WHERE client IN (SELECT client FROM auth_failures
        WHERE max(locked_until, updated_at) < @horizon ORDER BY max(locked_until, updated_at) LIMIT 100)`,
    ),
    insertTranscript: db.prepare(
      'INSERT INTO transcript (session_key, role, content, turn_id, created_at) VALUES (?, ?, ?, ?, ?)',
    ),
    selectTranscript: limitedStatements(
      db,
      (limit) =>
        `SELECT * FROM (SELECT * FROM transcript WHERE session_key = ? ORDER BY seq DESC LIMIT ${limit}) ORDER BY seq`,
    ),
    touchSession: db.prepare(
      `INSERT INTO sessions (key, agent_id, created_at, updated_at) VALUES (?, ?, ?, ?)
        ON CONFLICT (key) DO UPDATE SET updated_at = excluded.updated_at`,
    ),
    setLastRoute: db.prepare(
      `INSERT INTO sessions (key, agent_id, last_channel, last_to, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)
        ON CONFLICT (key) DO UPDATE SET last_channel = excluded.last_channel, last_to = excluded.last_to,
        updated_at = excluded.updated_at`,
    ),
    selectLastRoute: db.prepare('SELECT last_channel, last_to FROM sessions WHERE key = ?'),
    insertDelivery: db.prepare(
      `INSERT INTO deliveries (id, state, agent_id, channel, recipient, text, run_id, created_at, updated_at)
        VALUES (?, 'pending', ?, ?, ?, ?, ?, ?, ?)`,
    ),
    selectDelivery: db.prepare('SELECT * FROM deliveries WHERE id = ?'),
    selectRunDelivery: db.prepare('SELECT * FROM deliveries WHERE run_id = ? ORDER BY seq LIMIT 1'),
    selectAttempts: db.prepare('SELECT * FROM delivery_attempts WHERE delivery_id = ? ORDER BY seq'),
    // New deliveries oldest first, and retries due soonest first, by `deliveries_due`: the oldest of
    // both. One condition for both would read every pending delivery waiting for its retry.
    selectDueDeliveries: limitedStatements(db, dueDeliveries('')),
    /** The same, without the deliveries of agents (`@agents`) and of mappings' runs (`@hooks`) paused. */
    selectDueDeliveriesUnheld: limitedStatements(
      db,
      dueDeliveries(`AND agent_id NOT IN (SELECT value FROM json_each(@agents))
        AND (run_id IS NULL OR NOT EXISTS (SELECT 1 FROM runs r WHERE r.id = deliveries.run_id
          AND r.hook IN (SELECT value FROM json_each(@hooks))))`),
    ),
    /** Every dispatch hold (see dispatch-holds.ts). */
    selectHolds: db.prepare(SELECT_HOLDS),
    leaseDelivery: db.prepare(
      `UPDATE deliveries SET lease_owner = @owner, lease_until = @until, claim_id = @claimId WHERE id = @id AND state = 'pending'
        AND (lease_until IS NULL OR lease_until < @now)`,
    ),
    renewDelivery: db.prepare(
      "UPDATE deliveries SET lease_until = ? WHERE id = ? AND claim_id = ? AND state = 'pending'",
    ),
    progressDelivery: db.prepare(
      `UPDATE deliveries SET parts_sent = ?, resolved_channel = ?, resolved_to = ?, updated_at = ?
        WHERE id = ? AND claim_id = ? AND state = 'pending'`,
    ),
    finishAttempt: db.prepare(
      `UPDATE deliveries SET state = @state, attempts = attempts + 1, error = @error, updated_at = @at,
        resolved_channel = @resolvedChannel, resolved_to = @resolvedTo, parts_sent = @partsSent,
        next_attempt_at = @nextAttemptAt, sent_at = @sentAt, lease_owner = NULL, lease_until = NULL, claim_id = NULL
        WHERE id = @id AND claim_id = @claimId AND state = 'pending'`,
    ),
    insertAttempt: db.prepare(
      'INSERT INTO delivery_attempts (delivery_id, attempt, at, status, error, outcome) VALUES (?, ?, ?, ?, ?, ?)',
    ),
    requeueDelivery: db.prepare(
      `UPDATE deliveries SET state = 'pending', attempts = 0, next_attempt_at = ?, error = NULL, updated_at = ?,
        lease_owner = NULL, lease_until = NULL, claim_id = NULL WHERE id = ? AND state IN ('failed', 'skipped')`,
    ),
    expireDeliveryLeases: db.prepare(
      "UPDATE deliveries SET lease_until = 0 WHERE state = 'pending' AND lease_until IS NOT NULL",
    ),
  };

  const insertLogEvent = db.prepare(
    'INSERT INTO event_log (id, name, agent_id, request_id, created_at, data, untrusted) VALUES (?, ?, ?, ?, ?, ?, ?)',
  );
  return {
    ...s,
    /** Appends occurrences to the event log (inside the write of the action they describe). */
    addLogEvents(events: readonly (NewLogEvent | undefined)[]): void {
      for (const e of events) {
        if (e === undefined) continue;
        const v = logEventValues(e);
        insertLogEvent.run(v[0], v[1], v[2], v[3], v[4], v[5], v[6] ? 1 : 0);
      }
    },
    addEvent(e: NewSystemEvent, source: string): void {
      s.insertEvent.run(e.id, e.agentId, e.sessionKey, e.text, e.mode, source, e.createdAt);
    },
    addRun(r: NewRun, source: string): void {
      s.insertRun.run(
        r.id,
        r.agentId,
        r.sessionKey,
        r.message,
        r.name,
        r.wakeMode,
        r.deliver ? 1 : 0,
        r.channel,
        r.to,
        r.model,
        r.thinking,
        r.timeoutSeconds,
        source,
        r.createdAt,
        r.coalesce?.key ?? null,
        r.coalesce === undefined ? null : r.createdAt + r.coalesce.windowMs,
        r.source.hook,
      );
    },
    addTranscript(agentId: string, entries: readonly TranscriptEntry[], at: number): void {
      for (const t of entries) s.insertTranscript.run(t.sessionKey, t.role, t.content, t.turnId, t.createdAt);
      const keys = new Set(entries.map((t) => t.sessionKey));
      for (const key of keys) s.touchSession.run(key, agentId, at, at);
    },
    addDelivery(d: NewDelivery): void {
      s.insertDelivery.run(d.id, d.agentId, d.channel, d.to, d.text, d.runId, d.createdAt, d.createdAt);
    },
  };
}

export type Statements = ReturnType<typeof prepareStatements>;

/** Every dispatch hold, read where it is called (inside a write: in that write's transaction). */
export const readHolds = (st: Statements): DispatchHold[] => (st.selectHolds.all() as HoldRow[]).map(toHold);
