import Database from 'better-sqlite3';
import { MAIN } from './store-records.js';

export interface RawEvent {
  id: string;
  text: string;
  /** The `source` column as stored (JSON). */
  source: string;
  createdAt: number;
}

/**
 * Writes `next-heartbeat` events of agent `main`'s main session straight into the SQLite database at
 * `path`, in one transaction, as another writer beside a running store would: a lock the store holds
 * for a moment is waited for. A flood this way takes a fraction of what the store's own writes take.
 * Returns each event's `seq`.
 */
export function writePendingEvents(path: string, events: Iterable<RawEvent>): number[] {
  const db = new Database(path);
  try {
    db.pragma('busy_timeout = 5000');
    const add = db.prepare(
      `INSERT INTO system_events (id, agent_id, session_key, text, mode, source, created_at)
        VALUES (?, 'main', '${MAIN}', ?, 'next-heartbeat', ?, ?)`,
    );
    return db.transaction(() =>
      Array.from(events, (e) => Number(add.run(e.id, e.text, e.source, e.createdAt).lastInsertRowid)),
    )();
  } finally {
    db.close();
  }
}
