import type { Database } from 'better-sqlite3';

/** Batches writes from one event-loop turn into one transaction: one fsync per batch. */
export interface GroupCommit {
  /** Queues a write; resolves once the transaction holding it has committed. */
  submit(write: () => void): Promise<void>;
  /** Commits whatever is queued now (used at shutdown). */
  flush(): void;
}

interface Pending {
  write: () => void;
  resolve: () => void;
  reject: (error: unknown) => void;
}

/**
 * Creates a group committer. Writes submitted while the event loop runs callbacks are committed
 * together in a `setImmediate` callback, so concurrent requests share one commit. If the batch
 * fails, each write is retried in its own transaction, so one bad write fails alone.
 */
export function createGroupCommit(db: Database, schedule: (fn: () => void) => void = setImmediate): GroupCommit {
  let queue: Pending[] = [];
  let scheduled = false;

  const runAll = db.transaction((batch: Pending[]) => {
    for (const p of batch) p.write();
  });
  const runOne = db.transaction((p: Pending) => p.write());

  const flush = (): void => {
    scheduled = false;
    if (queue.length === 0) return;
    const batch = queue;
    queue = [];
    try {
      runAll(batch);
    } catch {
      for (const p of batch) {
        try {
          runOne(p);
        } catch (error) {
          p.reject(error);
          continue;
        }
        p.resolve();
      }
      return;
    }
    for (const p of batch) p.resolve();
  };

  return {
    submit(write) {
      return new Promise<void>((resolve, reject) => {
        queue.push({ write, resolve, reject });
        if (!scheduled) {
          scheduled = true;
          schedule(flush);
        }
      });
    },
    flush,
  };
}
