import type { Database } from 'better-sqlite3';
import { performance } from 'node:perf_hooks';
import { isStoreUnavailable } from '../is-store-unavailable.js';
import type { StallWatch } from '../create-stall-watch.js';
import type { StoreObserver } from '../store-stats.js';

/** Batches writes from one event-loop turn into one transaction: one fsync per batch, or fewer. */
export interface GroupCommit {
  /** Queues a write; resolves with its result once the transaction holding it has committed (and synced, with `afterCommit`). */
  submit<T>(write: () => T): Promise<T>;
  /** Commits whatever is queued now (used at shutdown), held or not. */
  flush(): void;
  /**
   * Holds commits back until `release`: writes queue up meanwhile. The checkpoint thread holds the
   * writer for the moment it takes to copy the WAL's last frames, so the next commit starts the
   * WAL over, without this thread waiting on a lock for it.
   */
  hold(): void;
  release(): void;
}

interface Pending {
  write: () => unknown;
  result?: unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

interface GroupCommitOptions {
  /** Runs a flush later (tests step it by hand). @default setImmediate */
  schedule?: (fn: () => void) => void;
  /** Sees each commit (metrics). */
  observer?: StoreObserver | undefined;
  /**
   * Called after each commit; the commit's writers are answered once it calls back, or fail with
   * the error it gives (see create-wal-sync.ts). Without it they are answered as soon as the commit
   * returns.
   */
  afterCommit?: ((done: (error: Error | null) => void) => void) | undefined;
  /** Told when each commit's sync starts and ends, so a sync that never ends is seen (create-stall-watch.ts). */
  stallWatch?: StallWatch | undefined;
  /** A monotonic clock in ms, for the pauses after the store was found unable to write. @default performance.now */
  now?: () => number;
}

/**
 * After a commit finds the store unable to write (another process holds its lock, the disk is full
 * or read-only), commits are not tried again for this long; the writes meanwhile fail at once with
 * the same error. Each further failure doubles it, up to `MAX_PAUSE_MS`; a commit that succeeds
 * ends it. Every try may wait out the busy timeout on the event loop (better-sqlite3 waits
 * synchronously): tried at every commit, a lock held for 10 s by another process stopped the loop
 * for 9.75 s of the 10 under 5 requests a second.
 */
const FIRST_PAUSE_MS = 250;
const MAX_PAUSE_MS = 2000;

/**
 * Creates a group committer. Writes submitted while the event loop runs callbacks are committed
 * together in a `setImmediate` callback, so concurrent requests share one commit. If the batch
 * fails, each write is retried in its own transaction, so one bad write fails alone, unless the
 * store cannot write at all (locked, full, read-only): then the whole batch fails at once, and so
 * do the writes of a short pause after it, without a try (FIRST_PAUSE_MS).
 *
 * With `afterCommit` (the WAL sync), writes that arrive while a commit waits for its sync are not
 * committed beside it: they queue, and the sync's end commits them as one batch. The event loop
 * handles them meanwhile, and one sync serves each batch.
 */
export function createGroupCommit(db: Database, options: GroupCommitOptions = {}): GroupCommit {
  const schedule = options.schedule ?? setImmediate;
  const observer = options.observer;
  const afterCommit = options.afterCommit;
  let queue: Pending[] = [];
  let scheduled = false;
  let held = false;
  /** Commits waiting for their sync: while there is one, writes queue for the commit after it. */
  let syncing = 0;
  const now = options.now ?? ((): number => performance.now());
  /** The store was found unable to write: writes fail with `error` until `until`; the next pause lasts `nextMs`. */
  let unable: { error: unknown; until: number } | null = null;
  let nextPauseMs = FIRST_PAUSE_MS;
  /** Fails the batch with `error` and pauses commits (see FIRST_PAUSE_MS). */
  const pause = (batch: Pending[], error: unknown): void => {
    unable = { error, until: now() + nextPauseMs };
    nextPauseMs = Math.min(MAX_PAUSE_MS, nextPauseMs * 2);
    for (const p of batch) p.reject(error);
  };

  const runAll = db.transaction((batch: Pending[]) => {
    for (const p of batch) p.result = p.write();
  });
  /** Reports a commit's size, time and outcome to the observer, if any. A batch is reported once its writers can be answered (its sync included). */
  const report = (writes: number, started: number, ok: boolean): void => {
    observer?.onCommit({ writes, seconds: (performance.now() - started) / 1000, ok });
  };
  const runOne = db.transaction((p: Pending) => {
    p.result = p.write();
  });

  const flush = (): void => {
    if (queue.length === 0) return;
    const batch = queue;
    queue = [];
    if (unable !== null) {
      if (now() < unable.until) {
        for (const p of batch) p.reject(unable.error);
        return;
      }
      unable = null;
    }
    const started = performance.now();
    try {
      runAll(batch);
    } catch (error) {
      report(batch.length, started, false);
      // Locked, full or read-only: every write would fail the same way, each after its own wait.
      if (isStoreUnavailable(error)) {
        pause(batch, error);
        return;
      }
      const committed: Pending[] = [];
      for (let i = 0; i < batch.length; i++) {
        const p = batch[i]!;
        const began = performance.now();
        try {
          runOne(p);
        } catch (error) {
          report(1, began, false);
          if (isStoreUnavailable(error)) {
            // The store stopped writing between the batch and this write: the rest would wait too.
            pause(batch.slice(i), error);
            break;
          }
          p.reject(error);
          continue;
        }
        // A write retried alone is reported as its own commit, before its sync.
        report(1, began, true);
        committed.push(p);
      }
      if (unable === null) nextPauseMs = FIRST_PAUSE_MS;
      settle(committed);
      return;
    }
    nextPauseMs = FIRST_PAUSE_MS;
    settle(batch, started);
  };
  /** Answers committed writes once their sync is done; reports the batch if it was one commit. */
  const settle = (committed: Pending[], started?: number): void => {
    if (afterCommit === undefined) {
      if (started !== undefined) report(committed.length, started, true);
      for (const p of committed) p.resolve(p.result);
      return;
    }
    if (committed.length === 0) return;
    syncing++;
    const watched = options.stallWatch?.begin();
    afterCommit((error) => {
      syncing--;
      if (watched !== undefined) options.stallWatch!.end(watched);
      if (started !== undefined) report(committed.length, started, error === null);
      if (error === null) for (const p of committed) p.resolve(p.result);
      else for (const p of committed) p.reject(error);
      // What queued during the sync is committed now, as one batch, and its sync starts at once.
      if (syncing === 0 && !held) flush();
    });
  };
  const scheduledFlush = (): void => {
    scheduled = false;
    if (!held && syncing === 0) flush();
  };

  return {
    submit<T>(write: () => T) {
      return new Promise<T>((resolve, reject) => {
        queue.push({ write, resolve: resolve as (value: unknown) => void, reject });
        if (!scheduled) {
          scheduled = true;
          schedule(scheduledFlush);
        }
      });
    },
    flush,
    hold() {
      held = true;
    },
    release() {
      held = false;
      if (queue.length > 0 && !scheduled) {
        scheduled = true;
        schedule(scheduledFlush);
      }
    },
  };
}
