import type Database from 'better-sqlite3';
import { OPEN } from './read-queue.js';
import type { ReadAnswer, ReadOnThread, ReadRequest } from './create-read-thread.js';

/**
 * Past this many pending events or queued runs, reads that count them (queue depths, session
 * listings) are made on the read thread: over a flood they would stop the serving thread for
 * a tenth of a second or more, while below it they cost it well under a millisecond.
 */
export const ON_THREAD_ABOVE = 10_000;

/** Makes a read here, or on the read thread while the queues are past `ON_THREAD_ABOVE`. */
export type FloodReads = <R extends ReadRequest>(read: R, here: () => ReadAnswer<R>) => Promise<ReadAnswer<R>>;

export function createFloodReads(db: Database.Database, onThread: ReadOnThread): FloodReads {
  // A look at no more than `ON_THREAD_ABOVE` index entries of each queue.
  const large = db
    .prepare(`SELECT max(
    (SELECT count(*) FROM (SELECT 1 FROM system_events WHERE consumed_at IS NULL LIMIT @n)),
    (SELECT count(*) FROM (SELECT 1 FROM runs WHERE ${OPEN} AND state = 'queued' LIMIT @n))) AS n`)
    .pluck();
  const flooded = (): boolean => (large.get({ n: ON_THREAD_ABOVE + 1 }) as number) > ON_THREAD_ABOVE;
  return async (read, here) => (flooded() ? onThread(read) : here());
}
