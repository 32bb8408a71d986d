import { Worker } from 'node:worker_threads';
import type { StoreReader } from '../store.js';
import type { PendingDigest } from '../types.js';
import type { DigestOptions } from './read-digest.js';

/** What the digest thread is started with. */
export interface DigestRequest {
  path: string;
  sessionKey: string;
  options: DigestOptions;
}

/**
 * Digests are read on a thread of their own, one per digest (a digest turn comes at most once a
 * heartbeat): over a million pending events the reads take seconds, which the serving thread
 * would spend unable to answer anyone.
 */
export function createSqliteDigest(path: string): Pick<StoreReader, 'digestPending'> {
  return {
    digestPending(sessionKey, options) {
      const workerData: DigestRequest = { path, sessionKey, options: { groups: options.groups, newest: options.newest } };
      return new Promise<PendingDigest | null>((resolve, reject) => {
        let answer: { digest: PendingDigest | null } | undefined;
        const thread = new Worker(new URL('./digest-worker.js', import.meta.url), {
          workerData,
          // SQLite sorts and groups in its own memory; the thread's heap holds one small answer.
          resourceLimits: { maxOldGenerationSizeMb: 32, maxYoungGenerationSizeMb: 4 },
        });
        thread.once('message', (digest: PendingDigest | null) => {
          answer = { digest };
        });
        thread.once('error', reject);
        thread.once('exit', (code) => {
          if (answer !== undefined) resolve(answer.digest);
          else reject(new Error(`the digest thread exited with code ${code} before answering`));
        });
      });
    },
  };
}
