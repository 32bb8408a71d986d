import {
  DEFAULT_LIMIT,
  toAttempt,
  toDelivery,
  toEvent,
  toRun,
  toSession,
  toTranscript,
  type AttemptRow,
  type DeliveryRow,
  type EventRow,
  type RunRow,
  type SessionRow,
  type TranscriptRow,
} from '../rows.js';
import type { StoreReader } from '../store.js';
import type { DeliveryWithAttempts } from '../types.js';
import { listingSql, type ListedTable } from '../listing-sql.js';
import { createPgDigest } from './create-pg-digest.js';
import type { PgContext } from './pg-context.js';

/** `limit` as SQL: a non-positive or absent one means no limit where the API says "all". */
const all = (limit: number | undefined): number | null => (limit === undefined || limit < 0 ? null : limit);

/**
 * SQL: the keys of `table`'s rows matching `where` that have no `sessions` row, in key order, one
 * index step each, at most `$1` of them.
 */
const keysWithoutRow = (table: string, where: string): string => `WITH RECURSIVE k (key) AS (
    (SELECT session_key FROM ${table} WHERE ${where} ORDER BY session_key LIMIT 1)
    UNION ALL
    SELECT (SELECT t.session_key FROM ${table} t WHERE t.${where} AND t.session_key > k.key ORDER BY t.session_key LIMIT 1)
      FROM k WHERE k.key IS NOT NULL)
  SELECT key FROM k WHERE key IS NOT NULL AND NOT EXISTS (SELECT 1 FROM sessions s WHERE s.key = k.key) LIMIT $1`;

/** SQL: a session's agent (`k.key` beside `sessions s`): its row's, else its pending events' or its runs'. */
const SESSION_AGENT = `COALESCE(s.agent_id, (SELECT agent_id FROM system_events WHERE session_key = k.key AND consumed_at IS NULL LIMIT 1),
    (SELECT agent_id FROM runs WHERE session_key = k.key LIMIT 1)) AS agent_id`;

const SESSION_COLUMNS = `s.last_channel, s.last_to, s.updated_at,
  (SELECT count(*)::int FROM transcript t WHERE t.session_key = k.key) AS entries,
  (SELECT count(*)::int FROM system_events e WHERE e.session_key = k.key AND e.consumed_at IS NULL) AS pending`;

export function createPgReader({ pool, queryTimeoutMs }: Pick<PgContext, 'pool' | 'queryTimeoutMs'>): StoreReader {
  const q = async <T>(text: string, values: unknown[] = []): Promise<T[]> =>
    (await pool.query(text, values)).rows as T[];
  const withAttempts = async (rows: DeliveryRow[]): Promise<DeliveryWithAttempts[]> => {
    if (rows.length === 0) return [];
    const attempts = await q<AttemptRow>(
      'SELECT * FROM delivery_attempts WHERE delivery_id = ANY($1::text[]) ORDER BY seq',
      [rows.map((r) => r.id)],
    );
    return rows.map((r) => ({
      ...toDelivery(r),
      attemptLog: attempts.filter((a) => a.delivery_id === r.id).map(toAttempt),
    }));
  };
  /** A listing's rows (see listing-sql.ts). */
  const listed = async <T>(table: ListedTable, o: { state?: string; limit?: number } | undefined): Promise<T[]> => {
    const sql = listingSql(table, o?.state, '$1');
    return sql === null ? [] : q<T>(sql, [o?.limit ?? DEFAULT_LIMIT]);
  };
  return {
    ...createPgDigest({ pool, queryTimeoutMs }),
    async listSystemEvents(o) {
      return (
        await q<EventRow>('SELECT * FROM system_events ORDER BY seq DESC LIMIT $1', [o?.limit ?? DEFAULT_LIMIT])
      ).map(toEvent);
    },
    async listRuns(o) {
      return (await listed<RunRow>('runs', o)).map(toRun);
    },
    async getRun(id) {
      const [row] = await q<RunRow>('SELECT * FROM runs WHERE id = $1', [id]);
      return row === undefined ? null : toRun(row);
    },
    async listPendingEvents(sessionKey, o) {
      return (
        await q<EventRow>(
          'SELECT * FROM system_events WHERE session_key = $1 AND consumed_at IS NULL ORDER BY seq LIMIT $2',
          [sessionKey, all(o?.limit)],
        )
      ).map(toEvent);
    },
    async hasPendingNowEvent(sessionKey) {
      return (
        (
          await q(
            "SELECT 1 FROM system_events WHERE session_key = $1 AND consumed_at IS NULL AND mode = 'now' LIMIT 1",
            [sessionKey],
          )
        ).length > 0
      );
    },
    async readTranscript(sessionKey, o) {
      return (
        await q<TranscriptRow>(
          'SELECT * FROM (SELECT * FROM transcript WHERE session_key = $1 ORDER BY seq DESC LIMIT $2) t ORDER BY seq',
          [sessionKey, all(o?.limit)],
        )
      ).map(toTranscript);
    },
    // Reads no more than it shows (see read-sessions.ts, the SQLite twin): the sessions touched last
    // by `sessions_recent`, then, when fewer exist, the keys without a row, skipping along the
    // pending-event and run indexes. A union of every key ever stored cost the database a scan of
    // both tables at each refresh of the dashboard's sessions view.
    async listSessions(o) {
      const limit = o?.limit ?? DEFAULT_LIMIT;
      const keys = (
        await q<{ key: string }>('SELECT key FROM sessions ORDER BY updated_at DESC, key LIMIT $1', [limit])
      ).map((r) => r.key);
      const left = limit - keys.length;
      if (left > 0) {
        const more = await q<{ key: string }>(
          `SELECT key FROM (${keysWithoutRow('system_events', 'consumed_at IS NULL')}) e
            UNION SELECT key FROM (${keysWithoutRow('runs', 'session_key IS NOT NULL')}) r ORDER BY key LIMIT $1`,
          [left],
        );
        keys.push(...more.map((r) => r.key));
      }
      return (
        await q<SessionRow>(
          `SELECT k.key, ${SESSION_AGENT}, ${SESSION_COLUMNS}
          FROM unnest($1::text[]) WITH ORDINALITY AS k (key, n) LEFT JOIN sessions s ON s.key = k.key ORDER BY k.n`,
          [keys],
        )
      ).map(toSession);
    },
    async getSession(key) {
      const [row] = await q<SessionRow>(
        `WITH k AS (SELECT $1::text AS key)
        SELECT k.key, ${SESSION_AGENT}, ${SESSION_COLUMNS}
        FROM k LEFT JOIN sessions s ON s.key = k.key`,
        [key],
      );
      return row === undefined || row.agent_id === null ? null : toSession(row);
    },
    async getLastRoute(sessionKey) {
      const [row] = await q<{ last_channel: string | null; last_to: string | null }>(
        'SELECT last_channel, last_to FROM sessions WHERE key = $1',
        [sessionKey],
      );
      return row?.last_channel == null || row.last_to == null ? null : { channel: row.last_channel, to: row.last_to };
    },
    async listDeliveries(o) {
      return withAttempts(await listed<DeliveryRow>('deliveries', o));
    },
    async getDelivery(id) {
      const [row] = await withAttempts(await q<DeliveryRow>('SELECT * FROM deliveries WHERE id = $1', [id]));
      return row ?? null;
    },
    async getRunDelivery(runId) {
      const [row] = await q<DeliveryRow>('SELECT * FROM deliveries WHERE run_id = $1 ORDER BY seq LIMIT 1', [runId]);
      return row === undefined ? null : toDelivery(row);
    },
  };
}
