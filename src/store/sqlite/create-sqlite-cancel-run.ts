import type { RunControl } from '../store.js';
import type { SqliteContext } from './sqlite-context.js';
import { encodeSource } from '../action-source.js';

/**
 * Cancels a queued run. A claim turns `queued` into `running` with a claim id under the same
 * single writer, so `state = 'queued' AND claim_id IS NULL` is the fence: a run claimed
 * meanwhile is left to its worker.
 */
export function createSqliteCancelRun({
  db,
  st,
  write,
  emit,
}: Pick<SqliteContext, 'db' | 'st' | 'write' | 'emit'>): RunControl {
  const cancel = db.prepare(
    `UPDATE runs SET state = 'failed', finished_at = ?, error = ?, held_reason = NULL WHERE id = ? AND state = 'queued' AND claim_id IS NULL`,
  );
  return {
    async cancelRun(c) {
      const source = encodeSource(c.summary.source);
      const done = await write(() => {
        if (cancel.run(c.finishedAt, c.error, c.runId).changes !== 1) return false;
        st.addEvent(c.summary, source);
        st.addLogEvents([c.published]);
        return true;
      });
      if (done) {
        if (c.published !== undefined) emit({ kind: 'published' });
        // The next run of its session may now be claimable.
        emit({ kind: 'runs' });
        emit({ kind: 'finished', runId: c.runId });
        if (c.summary.mode === 'now') emit({ kind: 'heartbeat', agentId: c.summary.agentId });
      }
      return done;
    },
  };
}
