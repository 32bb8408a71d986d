import type { StoreReader } from '../store.js';
import type { DeliveryWithAttempts } from '../types.js';
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
  type TranscriptRow,
} from '../rows.js';
import type { Statement } from 'better-sqlite3';
import { listingSql, type ListedTable } from '../listing-sql.js';
import type { FloodReads } from './create-flood-reads.js';
import type { ReadOnThread } from './create-read-thread.js';
import { createSqliteDigest } from './create-sqlite-digest.js';
import { createSessionsReader } from './read-sessions.js';
import type { SqliteContext } from './sqlite-context.js';

const limitOf = (o: { limit?: number } | undefined): number => o?.limit ?? DEFAULT_LIMIT;

export function createSqliteReader(
  { st, db }: Pick<SqliteContext, 'st' | 'db'>,
  onThread: ReadOnThread,
  floodReads: FloodReads,
): StoreReader {
  const sessions = createSessionsReader(db);
  const listings = new Map<string, Statement>();
  /**
   * A listing's rows (see listing-sql.ts); its statement prepared on first use. Only the states a
   * table has are kept, so callers naming others cannot grow the map.
   */
  const list = <T>(table: ListedTable, state: string | undefined, limit: number): T[] => {
    const id = `${table}:${state ?? ''}`;
    let stmt = listings.get(id);
    if (stmt === undefined) {
      const sql = listingSql(table, state, '?');
      if (sql === null) return [];
      stmt = db.prepare(sql);
      listings.set(id, stmt);
    }
    return stmt.all(limit) as T[];
  };
  const withAttempts = (row: DeliveryRow): DeliveryWithAttempts => ({
    ...toDelivery(row),
    attemptLog: (st.selectAttempts.all(row.id) as AttemptRow[]).map(toAttempt),
  });
  return {
    ...createSqliteDigest(onThread),
    async listSystemEvents(o) {
      return (st.selectEvents(limitOf(o)).all() as EventRow[]).map(toEvent);
    },
    async listRuns(o) {
      return list<RunRow>('runs', o?.state, limitOf(o)).map(toRun);
    },
    async getRun(id) {
      const row = st.selectRun.get(id) as RunRow | undefined;
      return row === undefined ? null : toRun(row);
    },
    async listPendingEvents(sessionKey, o) {
      return (st.selectPending(o?.limit ?? -1).all({ key: sessionKey }) as EventRow[]).map(toEvent);
    },
    async hasPendingNowEvent(sessionKey) {
      return st.selectPendingNow.get({ key: sessionKey }) !== undefined;
    },
    async readTranscript(sessionKey, o) {
      return (st.selectTranscript(o?.limit ?? -1).all(sessionKey) as TranscriptRow[]).map(toTranscript);
    },
    // Past the flood threshold on a thread of its own: counting a million pending events takes 0.1 s.
    async listSessions(o) {
      const limit = limitOf(o);
      return (await floodReads({ kind: 'sessions', limit }, () => sessions.list(limit))).map(toSession);
    },
    async getSession(key) {
      const row = await floodReads({ kind: 'session', key }, () => sessions.get(key));
      return row.agent_id === null ? null : toSession(row);
    },
    async getLastRoute(sessionKey) {
      const row = st.selectLastRoute.get(sessionKey) as
        | { last_channel: string | null; last_to: string | null }
        | undefined;
      return row?.last_channel == null || row.last_to == null ? null : { channel: row.last_channel, to: row.last_to };
    },
    async listDeliveries(o) {
      return list<DeliveryRow>('deliveries', o?.state, limitOf(o)).map(withAttempts);
    },
    async getRunDelivery(runId) {
      const row = st.selectRunDelivery.get(runId) as DeliveryRow | undefined;
      return row === undefined ? null : toDelivery(row);
    },
    async getDelivery(id) {
      const row = st.selectDelivery.get(id) as DeliveryRow | undefined;
      return row === undefined ? null : withAttempts(row);
    },
  };
}
