/**
 * PostgreSQL schema migrations, applied in order under an advisory lock; `hookgate_schema`
 * records how many ran. The same tables as SQLite: a `bigserial` order column, the public UUIDv7
 * ids in unique columns, millisecond timestamps as `bigint`, and partial indexes on open work.
 * `hookgate_now_ms()` is the database clock every lease is judged by.
 */
export const PG_MIGRATIONS: readonly string[] = [
  `
  CREATE FUNCTION hookgate_now_ms() RETURNS bigint LANGUAGE sql VOLATILE
    AS $$ SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint $$;
  CREATE TABLE system_events (
    seq bigserial PRIMARY KEY,
    id text NOT NULL UNIQUE,
    agent_id text NOT NULL,
    session_key text NOT NULL,
    text text NOT NULL,
    mode text NOT NULL,
    source text NOT NULL,
    created_at bigint NOT NULL,
    consumed_at bigint,
    consumed_by text
  );
  CREATE INDEX system_events_pending ON system_events (session_key, seq) WHERE consumed_at IS NULL;
  CREATE TABLE runs (
    seq bigserial PRIMARY KEY,
    id text NOT NULL UNIQUE,
    state text NOT NULL,
    agent_id text NOT NULL,
    session_key text NOT NULL,
    message text NOT NULL,
    name text NOT NULL,
    wake_mode text NOT NULL,
    deliver integer NOT NULL,
    channel text NOT NULL,
    recipient text,
    model text,
    thinking text,
    timeout_seconds double precision NOT NULL,
    source text NOT NULL,
    created_at bigint NOT NULL,
    attempts integer NOT NULL DEFAULT 0,
    started_at bigint,
    finished_at bigint,
    reply text,
    error text,
    model_used text,
    lease_owner text,
    lease_until bigint,
    claim_id text
  );
  CREATE INDEX runs_open ON runs (seq) WHERE state IN ('queued', 'running');
  CREATE INDEX runs_open_session ON runs (session_key, seq) WHERE state IN ('queued', 'running');
  CREATE INDEX runs_session ON runs (session_key, seq);
  CREATE INDEX runs_state ON runs (state, seq);
  CREATE TABLE sessions (
    key text PRIMARY KEY,
    agent_id text NOT NULL,
    last_channel text,
    last_to text,
    created_at bigint NOT NULL,
    updated_at bigint NOT NULL
  );
  CREATE TABLE transcript (
    seq bigserial PRIMARY KEY,
    session_key text NOT NULL,
    role text NOT NULL,
    content text NOT NULL,
    turn_id text NOT NULL,
    created_at bigint NOT NULL
  );
  CREATE INDEX transcript_session ON transcript (session_key, seq);
  CREATE TABLE deliveries (
    seq bigserial PRIMARY KEY,
    id text NOT NULL UNIQUE,
    state text NOT NULL,
    agent_id text NOT NULL,
    channel text NOT NULL,
    recipient text,
    text text NOT NULL,
    run_id text,
    attempts integer NOT NULL DEFAULT 0,
    error text,
    created_at bigint NOT NULL,
    updated_at bigint NOT NULL,
    resolved_channel text,
    resolved_to text,
    parts_sent integer NOT NULL DEFAULT 0,
    next_attempt_at bigint,
    lease_owner text,
    lease_until bigint,
    sent_at bigint,
    claim_id text
  );
  CREATE INDEX deliveries_pending ON deliveries (seq) WHERE state = 'pending';
  CREATE INDEX deliveries_run ON deliveries (run_id) WHERE run_id IS NOT NULL;
  CREATE INDEX deliveries_state ON deliveries (state, seq);
  CREATE TABLE delivery_attempts (
    seq bigserial PRIMARY KEY,
    delivery_id text NOT NULL,
    attempt integer NOT NULL,
    at bigint NOT NULL,
    status integer,
    error text,
    outcome text NOT NULL
  );
  CREATE INDEX delivery_attempts_delivery ON delivery_attempts (delivery_id, seq);
  CREATE TABLE heartbeat_leases (
    agent_id text PRIMARY KEY,
    claim_id text NOT NULL,
    owner text NOT NULL,
    lease_until bigint NOT NULL
  );
  CREATE TABLE auth_failures (
    client text PRIMARY KEY,
    failures bigint[] NOT NULL,
    locked_until bigint NOT NULL DEFAULT 0,
    updated_at bigint NOT NULL
  );
  CREATE INDEX auth_failures_locked ON auth_failures (locked_until) WHERE locked_until > 0;
  CREATE TABLE idempotency_keys (
    hook text NOT NULL,
    key text NOT NULL,
    status integer NOT NULL,
    body text NOT NULL,
    created_at bigint NOT NULL,
    expires_at bigint NOT NULL,
    PRIMARY KEY (hook, key)
  );
  CREATE INDEX idempotency_keys_expiry ON idempotency_keys (expires_at);
  CREATE TABLE heartbeat_turns (
    agent_id text PRIMARY KEY,
    last_turn_at bigint NOT NULL
  );
  `,
  `
  -- One index only (the public id), as on SQLite: every request writes a row here.
  CREATE TABLE requests (
    seq bigserial PRIMARY KEY,
    id text NOT NULL UNIQUE,
    at bigint NOT NULL,
    method text NOT NULL,
    path text NOT NULL,
    hook text,
    client text NOT NULL,
    status integer NOT NULL,
    code text,
    reason text,
    duration_ms float8 NOT NULL,
    event_ids text[] NOT NULL,
    run_ids text[] NOT NULL,
    payload text
  );
  `,
  `
  CREATE TABLE write_probe (id integer PRIMARY KEY CHECK (id = 1), at bigint NOT NULL);
  `,
  `
  ALTER TABLE runs ADD COLUMN coalesce_key text;
  ALTER TABLE runs ADD COLUMN coalesce_until bigint;
  CREATE INDEX runs_coalesce ON runs (coalesce_key, seq) WHERE state = 'queued' AND coalesce_key IS NOT NULL;
  `,
  `
  -- Budgets: a run's hook (mapping) beside its agent, the tokens it spent, and why it is held.
  ALTER TABLE runs ADD COLUMN hook text;
  ALTER TABLE runs ADD COLUMN tokens bigint;
  ALTER TABLE runs ADD COLUMN held_reason text;
  UPDATE runs SET hook = source::jsonb ->> 'hook'
    WHERE state IN ('queued', 'running') OR started_at >= hookgate_now_ms() - 2 * 86400000;
  CREATE INDEX runs_agent_started ON runs (agent_id, started_at, tokens) WHERE started_at IS NOT NULL;
  CREATE INDEX runs_hook_started ON runs (hook, started_at, tokens) WHERE started_at IS NOT NULL;
  `,
  `
  -- A session's row outlives its transcript only while it is in use or keeps a route: the rest go
  -- with the transcript's window (every agent run makes a session of its own).
  CREATE INDEX sessions_idle ON sessions (updated_at) WHERE last_channel IS NULL;
  `,
  `
  -- A held backlog out of the claims' way (see held-keys.ts): claims read queued runs no budget
  -- marked held; the keys the marks are made for, each with its pass, and the newest run marked,
  -- are kept beside them.
  CREATE INDEX runs_claimable ON runs (seq) WHERE state = 'queued' AND held_reason IS NULL;
  CREATE INDEX runs_held_agent ON runs (agent_id, seq) WHERE state = 'queued' AND held_reason IS NOT NULL;
  CREATE INDEX runs_held_hook ON runs (hook, seq) WHERE state = 'queued' AND held_reason IS NOT NULL;
  CREATE TABLE held_keys (
    scope text NOT NULL,
    key text NOT NULL,
    reason text,
    restart_reason text,
    phase text,
    pass_seq bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (scope, key)
  );
  CREATE TABLE held_watermark (id integer PRIMARY KEY CHECK (id = 1), seq bigint NOT NULL);
  UPDATE runs SET held_reason = NULL WHERE state = 'queued' AND held_reason IS NOT NULL;
  `,
  `
  -- Session listings read the sessions touched last without sorting them all.
  CREATE INDEX sessions_recent ON sessions (updated_at DESC, key);
  `,
  `
  -- Delivery claims read the deliveries due by their due time: a backlog waiting for its retries
  -- (a chat service down for an hour) is not read through at every claim.
  CREATE INDEX deliveries_due ON deliveries (next_attempt_at, seq) WHERE state = 'pending';
  `,
  `
  -- Claims read ready runs only, and let in runs whose coalescing window ended by when it ended
  -- (see ready-runs.ts).
  CREATE INDEX runs_ready ON runs (seq) WHERE state = 'queued' AND held_reason IS NULL AND coalesce_until IS NULL;
  CREATE INDEX runs_waiting ON runs (coalesce_until) WHERE state = 'queued' AND coalesce_until IS NOT NULL;
  `,
  `
  -- Stale auth failures by when they went stale: each failure deletes a few of the oldest.
  CREATE INDEX auth_failures_expiry ON auth_failures ((greatest(locked_until, updated_at)));
  `,
  `
  -- The tokens each heartbeat turn spent, counted against its agent's tokensPerDay beside its runs'
  -- (see run-budgets.ts); a turn deletes its agent's rows older than a day.
  CREATE TABLE heartbeat_spend (
    seq bigserial PRIMARY KEY,
    agent_id text NOT NULL,
    at bigint NOT NULL,
    tokens bigint NOT NULL
  );
  CREATE INDEX heartbeat_spend_agent ON heartbeat_spend (agent_id, at);
  `,
  `
  -- The request log listed by an unusual status (a 500, a 401) finds its rows without reading
  -- back through every request; answered requests (2xx), the most by far, are not in it.
  CREATE INDEX requests_unusual ON requests (status, seq) WHERE status NOT BETWEEN 200 AND 299;
  `,
  `
  -- The event log (see event-log-types.ts): one row per published occurrence, written in the
  -- transaction of the action it describes and only while mcp.enabled; its seq is each consumer's
  -- position (read only up to a head no transaction in flight can commit below: pg-log-head.ts).
  -- Marks hold the store's own positions (how far retention pruned the log).
  CREATE TABLE event_log (
    seq bigserial PRIMARY KEY,
    id text NOT NULL UNIQUE,
    name text NOT NULL,
    agent_id text,
    request_id text,
    created_at bigint NOT NULL,
    data text NOT NULL,
    untrusted boolean NOT NULL
  );
  CREATE INDEX event_log_name ON event_log (name, seq);
  CREATE TABLE store_marks (name text PRIMARY KEY, value bigint NOT NULL);
  CREATE TABLE mcp_subscriptions (
    seq bigserial PRIMARY KEY,
    id text NOT NULL UNIQUE,
    name text NOT NULL,
    arguments text NOT NULL,
    url text NOT NULL,
    secret text NOT NULL,
    cursor bigint NOT NULL,
    state text NOT NULL,
    end_reason text,
    expires_at bigint,
    max_age_ms bigint,
    attempts integer NOT NULL DEFAULT 0,
    next_attempt_at bigint NOT NULL DEFAULT 0,
    last_error text,
    last_delivery_at bigint,
    delivered bigint NOT NULL DEFAULT 0,
    lease_owner text,
    claim_id text,
    lease_until bigint,
    created_at bigint NOT NULL,
    updated_at bigint NOT NULL
  );
  `,
  `
  -- Dispatch holds (hookgate pause, drain), read by every claim (see dispatch-holds.ts).
  CREATE TABLE dispatch_holds (
    scope text NOT NULL,
    key text NOT NULL,
    kind text NOT NULL,
    note text,
    at bigint NOT NULL,
    PRIMARY KEY (scope, key)
  );
  `,
  `
  -- Each catch-up mapping's position in its provider's record, and the lease of the pass reading it.
  CREATE TABLE catch_up (
    mapping_id text PRIMARY KEY,
    cursor_at bigint,
    last_id text,
    resume_after text,
    updated_at bigint,
    claim_id text,
    owner text,
    lease_until bigint
  );
  `,
  `
  -- A digest of the body a client's Idempotency-Key first came with: the key reused with another
  -- body is refused (422 idempotency_key_reused), not answered as the first request.
  ALTER TABLE idempotency_keys ADD COLUMN fingerprint text;
  `,
  `
  -- The headers of a request whose payload is kept (gateway.recordPayloads), credentials left
  -- out, as JSON text: a replay carries them as the request did.
  ALTER TABLE requests ADD COLUMN headers text;
  `,
];
