import { Worker } from 'node:worker_threads';
import type { ListRequestsOptions, RequestRecord } from '../request-record.js';
import type { QueueRow, SessionRow } from '../rows.js';
import type { PendingDigest } from '../types.js';
import type { DigestOptions } from './read-digest.js';

/** The reads a read thread makes. */
export type ReadRequest =
  | { kind: 'digest'; sessionKey: string; options: DigestOptions }
  | { kind: 'queue' }
  | { kind: 'sessions'; limit: number }
  | { kind: 'session'; key: string }
  | { kind: 'requests'; options: ListRequestsOptions };

/** What a read thread answers to `R`. */
export type ReadAnswer<R extends ReadRequest> =
  R extends { kind: 'digest' } ? PendingDigest | null
  : R extends { kind: 'queue' } ? QueueRow
  : R extends { kind: 'sessions' } ? SessionRow[]
  : R extends { kind: 'requests' } ? RequestRecord[]
  : SessionRow;

/**
 * Makes one read on a thread of its own (read-worker.ts), started for it and ended after it: such
 * reads come seldom (a digest turn, a scrape under a flood), and a thread kept for them would cost
 * its memory all the time.
 */
export function runReadThread<R extends ReadRequest>(path: string, read: R): Promise<ReadAnswer<R>> {
  return new Promise((resolve, reject) => {
    let answer: { value: ReadAnswer<R> } | undefined;
    const thread = new Worker(new URL('./read-worker.js', import.meta.url), {
      workerData: { path, read },
      // SQLite sorts and groups in its own memory; the thread's heap holds one small answer.
      resourceLimits: { maxOldGenerationSizeMb: 32, maxYoungGenerationSizeMb: 4 },
    });
    thread.once('message', (value: ReadAnswer<R>) => {
      answer = { value };
    });
    thread.once('error', reject);
    thread.once('exit', (code) => {
      if (answer !== undefined) resolve(answer.value);
      else reject(new Error(`the read thread exited with code ${code} before answering`));
    });
  });
}
