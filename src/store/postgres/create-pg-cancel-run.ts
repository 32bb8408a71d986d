import type { RunControl } from '../store.js';
import type { WorkSignal } from '../types.js';
import { notify, type PgContext } from './pg-context.js';
import { encodeSource } from '../action-source.js';
import { insertLogEvents } from './create-pg-event-log.js';

/**
 * Cancels a queued run. A claim locks the row and turns it `running` with a claim id; this
 * update waits on that lock and then re-reads the row, so `state = 'queued' AND claim_id IS NULL`
 * fences it: a run claimed meanwhile is left to its worker.
 */
export function createPgCancelRun(ctx: Pick<PgContext, 'tx' | 'channel'>): RunControl {
  return {
    async cancelRun(c) {
      return ctx.tx(async (client) => {
        const { rowCount } = await client.query(
          `UPDATE runs SET state = 'failed', finished_at = $1, error = $2, held_reason = NULL WHERE id = $3 AND state = 'queued' AND claim_id IS NULL`,
          [c.finishedAt, c.error, c.runId],
        );
        if (rowCount !== 1) return false;
        const s = c.summary;
        await client.query(
          'INSERT INTO system_events (id, agent_id, session_key, text, mode, source, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7)',
          [s.id, s.agentId, s.sessionKey, s.text, s.mode, encodeSource(s.source), s.createdAt],
        );
        const signals: WorkSignal[] = [{ kind: 'runs' }, { kind: 'finished', runId: c.runId }];
        if (s.mode === 'now') signals.push({ kind: 'heartbeat', agentId: s.agentId });
        if (c.published !== undefined) {
          await insertLogEvents(client, [c.published]);
          signals.push({ kind: 'published' });
        }
        await notify(client, ctx.channel, signals);
        return true;
      });
    },
  };
}
