import type { StoreReader } from '../store.js';
import { runReadThread } from './run-read-thread.js';

/**
 * Digests are read on a thread of their own (a digest turn comes at most once a heartbeat): over a
 * million pending events the reads take seconds, which the serving thread would spend unable to
 * answer anyone.
 */
export function createSqliteDigest(path: string): Pick<StoreReader, 'digestPending'> {
  return {
    digestPending(sessionKey, options) {
      return runReadThread(path, { kind: 'digest', sessionKey, options: { groups: options.groups, newest: options.newest } });
    },
  };
}
