import type Database from 'better-sqlite3';
import { OPEN } from './read-queue.js';

/**
 * Past this many pending events or queued runs, reads that count them (queue depths, session
 * listings) are made on a thread of their own: over a flood they would stop the serving thread for
 * a tenth of a second or more, while below it they cost it well under a millisecond.
 */
export const ON_THREAD_ABOVE = 10_000;

/** Whether the queues are past `ON_THREAD_ABOVE`: a look at no more than that many index entries. */
export function createFloodProbe(db: Database.Database): () => boolean {
  const large = db.prepare(`SELECT max(
    (SELECT count(*) FROM (SELECT 1 FROM system_events WHERE consumed_at IS NULL LIMIT @n)),
    (SELECT count(*) FROM (SELECT 1 FROM runs WHERE ${OPEN} AND state = 'queued' LIMIT @n))) AS n`).pluck();
  return () => (large.get({ n: ON_THREAD_ABOVE + 1 }) as number) > ON_THREAD_ABOVE;
}
