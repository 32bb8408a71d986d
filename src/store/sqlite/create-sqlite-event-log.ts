import type { EventLog } from '../store.js';
import { PRUNED_THROUGH_MARK, toLogEvent, type LogEventRow } from '../log-rows.js';
import { createSeqBound } from './create-seq-bound.js';
import type { SqliteContext } from './sqlite-context.js';

/**
 * The event log on SQLite. One writer commits in `seq` order, so every committed row is below any
 * row still to come; the head a reader may move to is the last committed row once its commit is
 * synced (`synced`), so no subscriber hears of an occurrence a power loss could still take back.
 */
export function createSqliteEventLog({ db }: Pick<SqliteContext, 'db'>, synced: () => Promise<void>): EventLog {
  const head = db.prepare('SELECT coalesce(max(seq), 0) FROM event_log').pluck();
  const pruned = db.prepare('SELECT value FROM store_marks WHERE name = ?').pluck();
  const byName = db.prepare(
    'SELECT * FROM event_log WHERE name = @name AND seq > @after AND seq <= @through ORDER BY seq LIMIT @limit',
  );
  const byAgent = db.prepare(
    `SELECT * FROM event_log WHERE name = @name AND seq > @after AND seq <= @through AND agent_id = @agentId
      ORDER BY seq LIMIT @limit`,
  );
  const before = createSeqBound(db, 'event_log');
  return {
    async readLogPosition() {
      const h = head.get() as number;
      const p = (pruned.get(PRUNED_THROUGH_MARK) as number | undefined) ?? 0;
      await synced();
      return { head: h, prunedThrough: p };
    },
    async readLogEvents(q) {
      const p = { name: q.name, after: q.after, through: q.through, limit: q.limit };
      const rows = (
        q.agentId === undefined ? byName.all(p) : byAgent.all({ ...p, agentId: q.agentId })
      ) as LogEventRow[];
      return rows.map(toLogEvent);
    },
    findLogSeqBefore: (cutoff, now) => before(cutoff, now),
  };
}
