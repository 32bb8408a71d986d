/** The relay queue, as on SQLite (sqlite/relay-migration.ts). */
export const PG_RELAY_MIGRATION = `
  CREATE TABLE relay_requests (
    seq bigserial PRIMARY KEY,
    id text NOT NULL UNIQUE,
    hook text NOT NULL,
    url text NOT NULL,
    headers text NOT NULL,
    body bytea NOT NULL,
    bytes integer NOT NULL,
    auth text NOT NULL,
    idem_key text,
    key_expires_at bigint,
    fingerprint text,
    received_at bigint NOT NULL,
    state text NOT NULL,
    attempts integer NOT NULL DEFAULT 0,
    lease_id text,
    lease_until bigint,
    ended_at bigint,
    status integer,
    code text,
    reason text
  );
  CREATE UNIQUE INDEX relay_requests_key ON relay_requests (hook, idem_key) WHERE idem_key IS NOT NULL;
  CREATE INDEX relay_requests_pending ON relay_requests (seq) WHERE state = 'pending';
  CREATE INDEX relay_requests_ended ON relay_requests (state, received_at) WHERE state <> 'pending';
`;
