import type pg from 'pg';
import type { EventLog } from '../store.js';
import type { NewLogEvent } from '../types.js';
import type { LogPosition } from '../event-log-types.js';
import { PRUNED_THROUGH_MARK, toLogEvent, type LogEventRow } from '../log-rows.js';
import { logEventsCte } from './create-pg-group-commit.js';
import { pgSeqBound } from './pg-seq-bound.js';
import type { PgContext } from './pg-context.js';
import { waitForWriters } from './wait-for-writers.js';

/**
 * How long a reader waits for the transactions in flight at its look before it settles for the last
 * head known safe. Ingress transactions last milliseconds; one that outlives this is not ours.
 */
const HEAD_WAIT_MS = 1000;

/** Appends occurrences in `client`'s transaction. */
export async function insertLogEvents(client: pg.ClientBase, events: readonly NewLogEvent[]): Promise<void> {
  if (events.length === 0) return;
  const values: unknown[] = [];
  const arr = (items: unknown[], type: string): string => {
    values.push(items);
    return `$${values.length}::${type}[]`;
  };
  await client.query(logEventsCte(events, arr), values);
}

/**
 * The event log on PostgreSQL. Sequences are not commit-ordered: a transaction still in flight may
 * hold a row numbered below one already visible, so a reader that moved its position to the highest
 * visible row could pass over it for good. The safe head is the highest row seen at a look once
 * every transaction in flight at that look has ended (`waitForWriters`); until they have, the head
 * known safe before stands. Reads that overlap share one look, and one more follows them.
 */
export function createPgEventLog(ctx: Pick<PgContext, 'pool'>, options: { headWaitMs?: number } = {}): EventLog {
  const { pool } = ctx;
  const waitMs = options.headWaitMs ?? HEAD_WAIT_MS;
  let safe = 0;
  const look = async (): Promise<LogPosition> => {
    const { rows } = await pool.query(
      `SELECT (SELECT coalesce(max(seq), 0) FROM event_log) AS head,
        (SELECT value FROM store_marks WHERE name = $1) AS pruned,
        pg_snapshot_xmin(pg_current_snapshot()) = pg_snapshot_xmax(pg_current_snapshot()) AS idle,
        pg_snapshot_xmax(pg_current_snapshot())::text AS xmax`,
      [PRUNED_THROUGH_MARK],
    );
    const r = rows[0] as { head: number; pruned: number | null; idle: boolean; xmax: string };
    const prunedThrough = Number(r.pruned ?? 0);
    if (r.idle || (await waitForWriters(pool, r.xmax, waitMs))) safe = Math.max(safe, Number(r.head));
    return { head: safe, prunedThrough };
  };
  let current: Promise<LogPosition> | null = null;
  let next: Promise<LogPosition> | null = null;
  const read = (): Promise<LogPosition> => {
    if (current === null) {
      current = look().finally(() => {
        current = null;
      });
      return current;
    }
    // A look under way may predate the commit this reader was told of: it gets the look after.
    next ??= current
      .catch(() => undefined)
      .then(() => {
        next = null;
        return read();
      });
    return next;
  };
  return {
    readLogPosition: read,
    async readLogEvents(q) {
      const agent = q.agentId === undefined ? '' : ' AND agent_id = $5';
      const { rows } = await pool.query(
        `SELECT * FROM event_log WHERE name = $1 AND seq > $2 AND seq <= $3${agent} ORDER BY seq LIMIT $4`,
        [q.name, q.after, q.through, q.limit, ...(q.agentId === undefined ? [] : [q.agentId])],
      );
      return (rows as LogEventRow[]).map(toLogEvent);
    },
    findLogSeqBefore: (cutoff, now) => pgSeqBound(pool, 'event_log', cutoff, now),
  };
}
