import type { RetentionStore } from '../store.js';
import type { PruneCounts, PruneCutoffs } from '../maintenance-types.js';
import { createPassBounds } from '../seq-bound.js';
import { createSeqBound } from './create-seq-bound.js';
import type { SqliteContext } from './sqlite-context.js';
import type { SqliteRequestLog } from './create-sqlite-request-log.js';
import { PRUNED_THROUGH_MARK } from '../log-rows.js';

/**
 * Which rows each kind may lose: only finished work, oldest first (by the order column). A batch
 * reads only the rows created before the cut-off (`seq <= @…Seq`, see create-seq-bound.ts), so it
 * costs the same whether the table holds a thousand rows or a million.
 */
const PRUNABLE = {
  events: 'FROM system_events WHERE consumed_at IS NOT NULL AND consumed_at < @events',
  // NOT INDEXED: read in `seq` order from the start of the table, a batch stops at its limit. By the
  // index of finished runs (or done deliveries) SQLite read every due row of the three states and
  // sorted them for each batch: 5 ms a batch of 100 with 100,000 due, ten times that at a million.
  runs: "FROM runs NOT INDEXED WHERE state IN ('succeeded', 'failed', 'timed_out') AND finished_at < @runs",
  deliveries: "FROM deliveries NOT INDEXED WHERE state IN ('sent', 'failed', 'skipped') AND updated_at < @deliveries",
  transcript: 'FROM transcript WHERE created_at < @transcript',
  // Idle past the transcript's window, so its transcript is gone too; main sessions stay.
  sessions: "FROM sessions WHERE updated_at < @transcript AND last_channel IS NULL AND key NOT GLOB 'agent:*:main'",
} as const;

/**
 * Retention on SQLite. Request records are the request log's to prune (they are kept in batches,
 * create-sqlite-request-log.ts), oldest first.
 */
export function createSqliteRetention(
  { db, write, now }: SqliteContext,
  requests: Pick<SqliteRequestLog, 'pruneRecords' | 'countRecordsBefore'>,
): RetentionStore {
  const del = (table: string, where: string, bound: string) =>
    db.prepare(
      `DELETE FROM ${table} WHERE seq IN (SELECT seq ${where} AND seq <= @${bound} ORDER BY seq LIMIT @limit)`,
    );
  const count = (where: string) => db.prepare(`SELECT count(*) AS n ${where}`);
  const st = {
    events: del('system_events', PRUNABLE.events, 'eventsSeq'),
    runs: del('runs', PRUNABLE.runs, 'runsSeq'),
    attempts: db.prepare(
      `DELETE FROM delivery_attempts WHERE delivery_id IN (SELECT id ${PRUNABLE.deliveries} AND seq <= @deliveriesSeq ORDER BY seq LIMIT @limit)`,
    ),
    deliveries: del('deliveries', PRUNABLE.deliveries, 'deliveriesSeq'),
    transcript: del('transcript', PRUNABLE.transcript, 'transcriptSeq'),
    sessions: db.prepare(`DELETE FROM sessions WHERE key IN (SELECT key ${PRUNABLE.sessions} LIMIT @limit)`),
    keys: db.prepare(
      'DELETE FROM idempotency_keys WHERE (hook, key) IN (SELECT hook, key FROM idempotency_keys WHERE expires_at <= @now LIMIT @limit)',
    ),
    countEvents: count(PRUNABLE.events),
    countRuns: count(PRUNABLE.runs),
    countDeliveries: count(PRUNABLE.deliveries),
    countTranscript: count(PRUNABLE.transcript),
    countSessions: count(PRUNABLE.sessions),
    countKeys: db.prepare('SELECT count(*) AS n FROM idempotency_keys WHERE expires_at <= @now'),
    // The event log goes oldest first, every row up to the bound, so `pruned through` is exact: a
    // reader behind it has missed something (a gap), one past it has not.
    logThrough: db
      .prepare('SELECT max(seq) FROM (SELECT seq FROM event_log WHERE seq <= @eventLogSeq ORDER BY seq LIMIT @limit)')
      .pluck(),
    log: db.prepare('DELETE FROM event_log WHERE seq <= ?'),
    mark: db.prepare(
      'INSERT INTO store_marks (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = max(value, excluded.value)',
    ),
    countLog: db.prepare('SELECT count(*) AS n FROM event_log WHERE created_at < @eventLog'),
  };
  const boundsOf = createPassBounds((table) => createSeqBound(db, table), now);
  const n = (row: unknown): number => (row as { n: number }).n;
  const pruneLog = (p: { eventLogSeq: number; limit: number }): number => {
    const through = st.logThrough.get(p) as number | null;
    if (through === null) return 0;
    const deleted = st.log.run(through).changes;
    st.mark.run(PRUNED_THROUGH_MARK, through);
    return deleted;
  };
  return {
    async prune(c: PruneCutoffs, limit: number) {
      // Read before the batch's write: rows are only appended meanwhile, so the bounds still hold.
      const b = await boundsOf(c);
      const seqs = {
        eventsSeq: b.events,
        runsSeq: b.runs,
        deliveriesSeq: b.deliveries,
        transcriptSeq: b.transcript,
        eventLogSeq: b.eventLog,
      };
      return write((): PruneCounts => {
        const p = { ...c, limit, now: now(), ...seqs };
        st.attempts.run(p);
        return {
          events: st.events.run(p).changes,
          runs: st.runs.run(p).changes,
          deliveries: st.deliveries.run(p).changes,
          transcript: st.transcript.run(p).changes,
          requests: requests.pruneRecords(c.requests, limit, p.now),
          eventLog: pruneLog(p),
          idempotencyKeys: st.keys.run(p).changes,
          sessions: st.sessions.run(p).changes,
        };
      });
    },
    async countPrunable(c) {
      const p = { ...c, now: now() };
      return {
        events: n(st.countEvents.get(p)),
        runs: n(st.countRuns.get(p)),
        deliveries: n(st.countDeliveries.get(p)),
        transcript: n(st.countTranscript.get(p)),
        requests: requests.countRecordsBefore(c.requests),
        eventLog: n(st.countLog.get(p)),
        idempotencyKeys: n(st.countKeys.get(p)),
        sessions: n(st.countSessions.get(p)),
      };
    },
  };
}
