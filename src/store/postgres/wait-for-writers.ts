import { setTimeout as sleep } from 'node:timers/promises';
import type pg from 'pg';

/** How often the wait looks again. */
const POLL_MS = 2;

/**
 * Waits until every transaction that was in flight when a snapshot was taken (every xid below its
 * `xmax`) has ended; `false` when one still runs after `timeoutMs`.
 *
 * A `seq` is drawn when a row is inserted, not when it commits: a transaction still in flight may
 * hold rows numbered below rows another one already committed. Once every transaction that was
 * running at the snapshot has ended, nothing can commit below the highest `seq` it saw, because a
 * transaction that starts later draws higher numbers.
 */
export async function waitForWriters(q: pg.Pool | pg.ClientBase, xmax: string, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { rows } = await q.query('SELECT pg_snapshot_xmin(pg_current_snapshot()) >= $1::xid8 AS done', [xmax]);
    if ((rows[0] as { done: boolean }).done) return true;
    if (Date.now() >= deadline) return false;
    await sleep(POLL_MS);
  }
}
