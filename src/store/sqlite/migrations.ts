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
];
