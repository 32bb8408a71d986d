import type { Database } from 'better-sqlite3';
import { isStoreUnavailable } from '../is-store-unavailable.js';

/** Batches writes from one event-loop turn into one transaction: one fsync per batch. */
export interface GroupCommit {
  /** Queues a write; resolves with its result once the transaction holding it has committed. */
  submit<T>(write: () => T): Promise<T>;
  /** Commits whatever is queued now (used at shutdown). */
  flush(): void;
}

interface Pending {
  write: () => unknown;
  result?: unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/**
 * Creates a group committer. Writes submitted while the event loop runs callbacks are committed
 * together in a `setImmediate` callback, so concurrent requests share one commit. If the batch
 * fails, each write is retried in its own transaction, so one bad write fails alone, unless the
 * store cannot write at all (locked, full, read-only): then the whole batch fails at once.
 */
export function createGroupCommit(db: Database, schedule: (fn: () => void) => void = setImmediate): GroupCommit {
  let queue: Pending[] = [];
  let scheduled = false;

  const runAll = db.transaction((batch: Pending[]) => {
    for (const p of batch) p.result = p.write();
  });
  const runOne = db.transaction((p: Pending) => {
    p.result = p.write();
  });

  const flush = (): void => {
    scheduled = false;
    if (queue.length === 0) return;
    const batch = queue;
    queue = [];
    try {
      runAll(batch);
    } catch (error) {
      // Locked, full or read-only: every write would fail the same way, each after its own wait.
      if (isStoreUnavailable(error)) {
        for (const p of batch) p.reject(error);
        return;
      }
      for (const p of batch) {
        try {
          runOne(p);
        } catch (error) {
          p.reject(error);
          continue;
        }
        p.resolve(p.result);
      }
      return;
    }
    for (const p of batch) p.resolve(p.result);
  };

  return {
    submit<T>(write: () => T) {
      return new Promise<T>((resolve, reject) => {
        queue.push({ write, resolve: resolve as (value: unknown) => void, reject });
        if (!scheduled) {
          scheduled = true;
          schedule(flush);
        }
      });
    },
    flush,
  };
}
