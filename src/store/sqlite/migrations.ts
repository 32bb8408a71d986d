/**
 * Schema migrations, applied in order; `PRAGMA user_version` records how many ran.
 * Tables use an integer rowid as primary key (append-ordered inserts) and keep the public id,
 * a UUIDv7, in a unique column: also append-ordered, so inserts never split index pages.
 */
export const MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE system_events (
    seq INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    agent_id TEXT NOT NULL,
    session_key TEXT NOT NULL,
    text TEXT NOT NULL,
    mode TEXT NOT NULL,
    source TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    consumed_at INTEGER
  );
  CREATE TABLE runs (
    seq INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    state TEXT NOT NULL,
    agent_id TEXT NOT NULL,
    session_key TEXT NOT NULL,
    message TEXT NOT NULL,
    name TEXT NOT NULL,
    wake_mode TEXT NOT NULL,
    deliver INTEGER NOT NULL,
    channel TEXT NOT NULL,
    recipient TEXT,
    model TEXT,
    thinking TEXT,
    timeout_seconds REAL NOT NULL,
    source TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    started_at INTEGER,
    finished_at INTEGER,
    reply TEXT,
    error TEXT
  );
  `,
  `
  ALTER TABLE system_events ADD COLUMN consumed_by TEXT;
  CREATE INDEX system_events_pending ON system_events (session_key, seq) WHERE consumed_at IS NULL;
  ALTER TABLE runs ADD COLUMN model_used TEXT;
  ALTER TABLE runs ADD COLUMN lease_owner TEXT;
  ALTER TABLE runs ADD COLUMN lease_until INTEGER;
  CREATE INDEX runs_open ON runs (state, seq) WHERE state IN ('queued', 'running');
  CREATE INDEX runs_session ON runs (session_key, seq);
  CREATE TABLE sessions (
    key TEXT PRIMARY KEY,
    agent_id TEXT NOT NULL,
    last_channel TEXT,
    last_to TEXT,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
  );
  CREATE TABLE transcript (
    seq INTEGER PRIMARY KEY,
    session_key TEXT NOT NULL,
    role TEXT NOT NULL,
    content TEXT NOT NULL,
    turn_id TEXT NOT NULL,
    created_at INTEGER NOT NULL
  );
  CREATE INDEX transcript_session ON transcript (session_key, seq);
  CREATE TABLE deliveries (
    seq INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    state TEXT NOT NULL,
    agent_id TEXT NOT NULL,
    channel TEXT NOT NULL,
    recipient TEXT,
    text TEXT NOT NULL,
    run_id TEXT,
    attempts INTEGER NOT NULL DEFAULT 0,
    error TEXT,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
  );
  CREATE INDEX deliveries_pending ON deliveries (state, seq) WHERE state = 'pending';
  `,
  `
  ALTER TABLE deliveries ADD COLUMN resolved_channel TEXT;
  ALTER TABLE deliveries ADD COLUMN resolved_to TEXT;
  ALTER TABLE deliveries ADD COLUMN parts_sent INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE deliveries ADD COLUMN next_attempt_at INTEGER;
  ALTER TABLE deliveries ADD COLUMN lease_owner TEXT;
  ALTER TABLE deliveries ADD COLUMN lease_until INTEGER;
  ALTER TABLE deliveries ADD COLUMN sent_at INTEGER;
  DROP INDEX deliveries_pending;
  CREATE INDEX deliveries_pending ON deliveries (seq) WHERE state = 'pending';
  CREATE TABLE delivery_attempts (
    seq INTEGER PRIMARY KEY,
    delivery_id TEXT NOT NULL,
    attempt INTEGER NOT NULL,
    at INTEGER NOT NULL,
    status INTEGER,
    error TEXT,
    outcome TEXT NOT NULL
  );
  CREATE INDEX delivery_attempts_delivery ON delivery_attempts (delivery_id, seq);
  `,
  `
  CREATE INDEX runs_open_session ON runs (session_key, seq) WHERE state IN ('queued', 'running');
  `,
  `
  ALTER TABLE runs ADD COLUMN claim_id TEXT;
  ALTER TABLE deliveries ADD COLUMN claim_id TEXT;
  CREATE TABLE heartbeat_leases (
    agent_id TEXT PRIMARY KEY,
    claim_id TEXT NOT NULL,
    owner TEXT NOT NULL,
    lease_until INTEGER NOT NULL
  );
  CREATE TABLE auth_failures (
    client TEXT PRIMARY KEY,
    failures TEXT NOT NULL,
    locked_until INTEGER NOT NULL DEFAULT 0,
    updated_at INTEGER NOT NULL
  );
  CREATE INDEX auth_failures_locked ON auth_failures (locked_until) WHERE locked_until > 0;
  `,
  `
  CREATE TABLE idempotency_keys (
    hook TEXT NOT NULL,
    key TEXT NOT NULL,
    status INTEGER NOT NULL,
    body TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    PRIMARY KEY (hook, key)
  ) WITHOUT ROWID;
  CREATE INDEX idempotency_keys_expiry ON idempotency_keys (expires_at);
  `,
  `
  CREATE TABLE heartbeat_turns (
    agent_id TEXT PRIMARY KEY,
    last_turn_at INTEGER NOT NULL
  );
  `,
  `
  -- Every request writes a row here, so each B-tree is a cost on the ingress path: one only, keyed
  -- by the UUIDv7 id (time-ordered, so inserts append). Listings walk it backwards, pruning forwards.
  CREATE TABLE requests (
    id TEXT PRIMARY KEY,
    at INTEGER NOT NULL,
    method TEXT NOT NULL,
    path TEXT NOT NULL,
    hook TEXT,
    client TEXT NOT NULL,
    status INTEGER NOT NULL,
    code TEXT,
    reason TEXT,
    duration_ms REAL NOT NULL,
    event_ids TEXT NOT NULL,
    run_ids TEXT NOT NULL,
    payload TEXT
  ) WITHOUT ROWID;
  `,
  `
  CREATE TABLE write_probe (id INTEGER PRIMARY KEY CHECK (id = 1), at INTEGER NOT NULL);
  `,
  `
  ALTER TABLE runs ADD COLUMN coalesce_key TEXT;
  ALTER TABLE runs ADD COLUMN coalesce_until INTEGER;
  CREATE INDEX runs_coalesce ON runs (coalesce_key, seq) WHERE state = 'queued' AND coalesce_key IS NOT NULL;
  `,
  `
  -- Budgets: a run's hook (mapping) beside its agent, the tokens it spent, and why it is held.
  -- The budget indexes are partial on started runs, so the ingress's insert of a queued run does
  -- not touch them. Runs that may still count against a window get their hook filled in.
  ALTER TABLE runs ADD COLUMN hook TEXT;
  ALTER TABLE runs ADD COLUMN tokens INTEGER;
  ALTER TABLE runs ADD COLUMN held_reason TEXT;
  UPDATE runs SET hook = json_extract(source, '$.hook')
    WHERE state IN ('queued', 'running') OR started_at >= (CAST(strftime('%s', 'now') AS INTEGER) - 2 * 86400) * 1000;
  CREATE INDEX runs_agent_started ON runs (agent_id, started_at, tokens) WHERE started_at IS NOT NULL;
  CREATE INDEX runs_hook_started ON runs (hook, started_at, tokens) WHERE started_at IS NOT NULL;
  `,
  `
  -- Request records in batches: one row per batch (a JSON array of arrays, see request-batch.ts)
  -- instead of a row per request in the ingress's commit. The records kept so far move over in
  -- batches of 512 in id order (what the gateway writes at most), however dense a minute was.
  CREATE TABLE request_batches (
    seq INTEGER PRIMARY KEY,
    min_id TEXT NOT NULL,
    max_id TEXT NOT NULL,
    upto_id TEXT NOT NULL,
    min_at INTEGER NOT NULL,
    max_at INTEGER NOT NULL,
    count INTEGER NOT NULL,
    records TEXT NOT NULL
  );
  CREATE INDEX request_batches_ids ON request_batches (max_id, min_id);
  INSERT INTO request_batches (min_id, max_id, upto_id, min_at, max_at, count, records)
    SELECT min(id), max(id), max(id), min(at), max(at), count(*),
      json_group_array(json_array(id, at, method, path, hook, client, status, code, reason, duration_ms,
        json(event_ids), json(run_ids), payload))
    FROM (SELECT *, row_number() OVER (ORDER BY id) - 1 AS n FROM requests) GROUP BY n / 512 ORDER BY min(id);
  UPDATE request_batches SET upto_id = w.upto
    FROM (SELECT seq, max(max_id) OVER (ORDER BY seq) AS upto FROM request_batches) AS w WHERE w.seq = request_batches.seq;
  DROP TABLE requests;
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
    scope TEXT NOT NULL,
    key TEXT NOT NULL,
    reason TEXT,
    restart_reason TEXT,
    phase TEXT,
    pass_seq INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (scope, key)
  );
  CREATE TABLE held_watermark (id INTEGER PRIMARY KEY CHECK (id = 1), seq INTEGER NOT NULL);
  UPDATE runs SET held_reason = NULL WHERE state = 'queued' AND held_reason IS NOT NULL;
  `,
  `
  -- A digest turn consumes a session's backlog by one mark (see consumed-marks.ts): its events up
  -- to the mark's seq count as consumed at once, and are stamped in small batches after it.
  CREATE TABLE consumed_marks (
    session_key TEXT NOT NULL,
    seq INTEGER NOT NULL,
    turn_id TEXT,
    at INTEGER NOT NULL,
    PRIMARY KEY (session_key, seq)
  );
  `,
  `
  -- Session listings read the sessions touched last without sorting them all (read-sessions.ts).
  CREATE INDEX sessions_recent ON sessions (updated_at DESC, key);
  `,
  `
  -- Delivery claims read the deliveries due by their due time: a backlog waiting for its retries
  -- (a chat service down for an hour) is not read through at every claim.
  CREATE INDEX deliveries_due ON deliveries (next_attempt_at, seq) WHERE state = 'pending';
  `,
  `
  -- Listings of one state, newest first, read that state's rows only (see listing-sql.ts).
  CREATE INDEX runs_finished ON runs (state, seq) WHERE state IN ('succeeded', 'failed', 'timed_out');
  CREATE INDEX deliveries_done ON deliveries (state, seq) WHERE state IN ('sent', 'failed', 'skipped');
  `,
  `
  -- Claims read ready runs only, and let in runs whose coalescing window ended by when it ended
  -- (see ready-runs.ts).
  CREATE INDEX runs_ready ON runs (seq) WHERE state = 'queued' AND held_reason IS NULL AND coalesce_until IS NULL;
  CREATE INDEX runs_waiting ON runs (coalesce_until) WHERE state = 'queued' AND coalesce_until IS NOT NULL;
  `,
  `
  -- A run's delivery by its run: a client waiting for a run's reply looks it up every 500 ms.
  CREATE INDEX deliveries_run ON deliveries (run_id) WHERE run_id IS NOT NULL;
  -- Stale auth failures by when they went stale: each failure deletes a few of the oldest.
  CREATE INDEX auth_failures_expiry ON auth_failures (max(locked_until, updated_at));
  `,
  `
  -- The tokens each heartbeat turn spent, counted against its agent's tokensPerDay beside its runs'
  -- (see run-budgets.ts); a turn deletes its agent's rows older than a day.
  CREATE TABLE heartbeat_spend (
    seq INTEGER PRIMARY KEY,
    agent_id TEXT NOT NULL,
    at INTEGER NOT NULL,
    tokens INTEGER NOT NULL
  );
  CREATE INDEX heartbeat_spend_agent ON heartbeat_spend (agent_id, at);
  `,
  `
  -- What a batch of request records holds, for filtered listings to pass over a batch without
  -- reading it: large batches are now stored compressed (see request-batch.ts), and the text of
  -- older rows, NULL here, is searched as before.
  ALTER TABLE request_batches ADD COLUMN statuses TEXT;
  ALTER TABLE request_batches ADD COLUMN hooks TEXT;
  `,
  `
  -- The event log (see event-log-types.ts): one row per published occurrence, written in the
  -- transaction of the action it describes and only while mcp.enabled; its seq is each consumer's
  -- position. Marks hold the store's own positions (how far retention pruned the log).
  -- AUTOINCREMENT: a plain rowid is max + 1, so once retention emptied the table (or took its
  -- newest rows) numbers would be handed out again, below positions subscribers already hold.
  CREATE TABLE event_log (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    agent_id TEXT,
    request_id TEXT,
    created_at INTEGER NOT NULL,
    data TEXT NOT NULL,
    untrusted INTEGER NOT NULL
  );
  CREATE INDEX event_log_name ON event_log (name, seq);
  CREATE TABLE store_marks (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
  CREATE TABLE mcp_subscriptions (
    seq INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    arguments TEXT NOT NULL,
    url TEXT NOT NULL,
    secret TEXT NOT NULL,
    cursor INTEGER NOT NULL,
    state TEXT NOT NULL,
    end_reason TEXT,
    expires_at INTEGER,
    max_age_ms INTEGER,
    attempts INTEGER NOT NULL DEFAULT 0,
    next_attempt_at INTEGER NOT NULL DEFAULT 0,
    last_error TEXT,
    last_delivery_at INTEGER,
    delivered INTEGER NOT NULL DEFAULT 0,
    lease_owner TEXT,
    claim_id TEXT,
    lease_until INTEGER,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
  );
  `,
  `
  -- Dispatch holds (hookgate pause, drain), read by every claim (see dispatch-holds.ts).
  CREATE TABLE dispatch_holds (
    scope TEXT NOT NULL,
    key TEXT NOT NULL,
    kind TEXT NOT NULL,
    note TEXT,
    at INTEGER NOT NULL,
    PRIMARY KEY (scope, key)
  );
  `,
  `
  -- Each catch-up mapping's position in its provider's record, and the lease of the pass reading it.
  CREATE TABLE catch_up (
    mapping_id TEXT PRIMARY KEY,
    cursor_at INTEGER,
    last_id TEXT,
    resume_after TEXT,
    updated_at INTEGER,
    claim_id TEXT,
    owner TEXT,
    lease_until INTEGER
  );
  `,
  `
  -- A digest turn that showed only some kinds of its backlog consumes those kinds and leaves the
  -- rest pending (see consumed-marks.ts): a filtered mark, with its kinds beside it. Marks are
  -- told apart by id, since two may end at the same event.
  CREATE TABLE consumed_marks_by_id (
    id INTEGER PRIMARY KEY,
    session_key TEXT NOT NULL,
    seq INTEGER NOT NULL,
    turn_id TEXT,
    at INTEGER NOT NULL,
    filtered INTEGER NOT NULL DEFAULT 0,
    stamped_seq INTEGER NOT NULL DEFAULT 0
  );
  INSERT INTO consumed_marks_by_id (session_key, seq, turn_id, at)
    SELECT session_key, seq, turn_id, at FROM consumed_marks ORDER BY seq;
  DROP TABLE consumed_marks;
  ALTER TABLE consumed_marks_by_id RENAME TO consumed_marks;
  CREATE INDEX consumed_marks_session ON consumed_marks (session_key, filtered, seq);
  CREATE TABLE consumed_mark_kinds (
    mark_id INTEGER NOT NULL,
    session_key TEXT NOT NULL,
    mark_seq INTEGER NOT NULL,
    hook TEXT,
    shape TEXT NOT NULL
  );
  CREATE INDEX consumed_mark_kinds_kind ON consumed_mark_kinds (session_key, hook, shape, mark_seq);
  CREATE INDEX consumed_mark_kinds_mark ON consumed_mark_kinds (mark_id);
  `,
  `
  -- A digest of the body a client's Idempotency-Key first came with: the key reused with another
  -- body is refused (422 idempotency_key_reused), not answered as the first request.
  ALTER TABLE idempotency_keys ADD COLUMN fingerprint TEXT;
  `,
];
