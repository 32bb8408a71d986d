import type { StoreReader } from '../store.js';
import type { ReadOnThread } from './create-read-thread.js';

/**
 * Digests are read on the read thread (a digest turn comes at most once a heartbeat): over a
 * million pending events the reads take seconds, which the serving thread would spend unable to
 * answer anyone.
 */
export function createSqliteDigest(onThread: ReadOnThread): Pick<StoreReader, 'digestPending'> {
  return {
    digestPending(sessionKey, options) {
      return onThread({
        kind: 'digest',
        sessionKey,
        options: { groups: options.groups, hooks: options.hooks, newest: options.newest, high: options.high },
      });
    },
  };
}
