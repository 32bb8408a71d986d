/**
 * The relay queue (relay-queue.ts): each request a relay accepted, as received, until a home
 * acknowledges it; then only its key, for its window. `pending` rows are leased oldest first.
 */
export const SQLITE_RELAY_MIGRATION = `
  CREATE TABLE relay_requests (
    seq INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    hook TEXT NOT NULL,
    url TEXT NOT NULL,
    headers TEXT NOT NULL,
    body BLOB NOT NULL,
    bytes INTEGER NOT NULL,
    auth TEXT NOT NULL,
    idem_key TEXT,
    key_expires_at INTEGER,
    fingerprint TEXT,
    received_at INTEGER NOT NULL,
    state TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    lease_id TEXT,
    lease_until INTEGER,
    ended_at INTEGER,
    status INTEGER,
    code TEXT,
    reason TEXT
  );
  CREATE UNIQUE INDEX relay_requests_key ON relay_requests (hook, idem_key) WHERE idem_key IS NOT NULL;
  CREATE INDEX relay_requests_pending ON relay_requests (seq) WHERE state = 'pending';
  CREATE INDEX relay_requests_ended ON relay_requests (state, received_at) WHERE state <> 'pending';
`;
