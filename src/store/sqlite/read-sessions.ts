import type Database from 'better-sqlite3';
import type { SessionRow } from '../rows.js';
import { PENDING } from './consumed-marks-sql.js';

/** SQL: the session keys of `table`'s rows matching `where`, in key order, one index step each, skipping keys with a `sessions` row. */
const keysWithoutRow = (table: string, where: string): string => `WITH RECURSIVE k (key) AS (
    SELECT min(session_key) FROM ${table} WHERE ${where}
    UNION ALL
    SELECT (SELECT min(session_key) FROM ${table} WHERE ${where} AND session_key > k.key) FROM k WHERE k.key IS NOT NULL)
  SELECT key FROM k WHERE key IS NOT NULL AND NOT EXISTS (SELECT 1 FROM sessions s WHERE s.key = k.key) LIMIT ?`;

interface SessionsReader {
  /** The sessions touched last first, then those without a row yet, by key. */
  list(limit: number): SessionRow[];
  /** One session (`agent_id` null when nothing of it is stored). */
  get(key: string): SessionRow;
}

/**
 * Session listings. A session's row comes with its first transcript entry; before that (events
 * pending, runs waiting) and after the retention removed an idle one (its runs kept longer), only
 * those rows know the key. The listing reads the rows by recency through `sessions_recent`, and
 * looks for keys without a row only when fewer rows than asked exist, skipping along the indexes on
 * pending events and runs: listing sessions reads no more than it shows, where a union of every key
 * ever stored took 0.3 s over a million events and 200,000 runs, every 2 s the dashboard was open.
 */
export function createSessionsReader(db: Database.Database): SessionsReader {
  const recent = db.prepare('SELECT key FROM sessions ORDER BY updated_at DESC, key LIMIT ?').pluck();
  const eventKeys = db.prepare(keysWithoutRow('system_events', 'consumed_at IS NULL')).pluck();
  const runKeys = db.prepare(keysWithoutRow('runs', 'session_key IS NOT NULL')).pluck();
  const one = db.prepare(
    `SELECT @key AS key,
        COALESCE(s.agent_id, (SELECT agent_id FROM system_events WHERE session_key = @key AND consumed_at IS NULL LIMIT 1),
          (SELECT agent_id FROM runs WHERE session_key = @key LIMIT 1)) AS agent_id,
        s.last_channel, s.last_to, s.updated_at,
        (SELECT count(*) FROM transcript t WHERE t.session_key = @key) AS entries,
        (SELECT count(*) FROM system_events e WHERE e.session_key = @key AND ${PENDING('e', '@key')}) AS pending
      FROM (SELECT 1) LEFT JOIN sessions s ON s.key = @key`,
  );
  const get = (key: string): SessionRow => one.get({ key }) as SessionRow;
  return {
    list(limit) {
      const keys = recent.all(limit) as string[];
      const left = limit - keys.length;
      if (left > 0) {
        const more = [...new Set([...(eventKeys.all(left) as string[]), ...(runKeys.all(left) as string[])])];
        keys.push(...more.sort().slice(0, left));
      }
      return keys.map(get);
    },
    get,
  };
}
