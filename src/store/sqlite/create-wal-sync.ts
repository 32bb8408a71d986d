import { close, fdatasync, openSync } from 'node:fs';

/**
 * Makes commits durable without the event loop waiting for the disk. The serving connection
 * commits with `synchronous = NORMAL` (its commit writes the WAL but does not sync it); each
 * commit then waits here for an fdatasync of the WAL file, run on libuv's thread pool, before its
 * writers are answered. Requests that arrive meanwhile are read, handled and committed, and the
 * next sync covers them: the disk's wait overlaps the next group's work instead of adding to it.
 *
 * What is acknowledged is on disk exactly as with `synchronous = FULL`: an fdatasync of the WAL
 * (any descriptor of the file) flushes every frame written before it, and SQLite still syncs the
 * WAL's header when it starts the WAL over, and the WAL and the database around each checkpoint.
 * Another connection, or a read outside a write, may see a commit before its sync: whatever answers
 * a client from such a read waits for `whenSynced` first.
 */
export interface WalSync {
  /** Calls `done` once everything committed before this call is on disk, or with the sync's error. */
  afterCommit(done: (error: WalSyncError | null) => void): void;
  /** Like `afterCommit` without a commit of its own: at once when nothing committed is unsynced. */
  whenSynced(done: (error: WalSyncError | null) => void): void;
  /** Waits for the sync in flight and the ones queued behind it, then closes the file. */
  close(): Promise<void>;
}

/**
 * A commit that SQLite wrote but whose sync failed: whether it survives a power loss is unknown, so
 * its writers are not told it succeeded. Coded as SQLite codes a failed fsync of its own, so the
 * ingress answers it as a store that cannot write (503 `store_unavailable`).
 */
export class WalSyncError extends Error {
  readonly code = 'SQLITE_IOERR_FSYNC';
  constructor(cause: Error) {
    super(`the WAL could not be synced: ${cause.message}`, { cause });
  }
}

interface Waiter {
  /** The commit count this waiter needs synced. */
  upTo: number;
  done: (error: WalSyncError | null) => void;
}

/**
 * Opens the WAL file at `walPath` (the connection must already be in WAL mode) for syncing.
 * `sync` is `fs.fdatasync`; tests pass one they complete by hand.
 */
export function createWalSync(walPath: string, sync: typeof fdatasync = fdatasync): WalSync {
  // Read-only is enough: fdatasync flushes the file's data whichever descriptor wrote it.
  const fd = openSync(walPath, 'r');
  /** Commits reported so far, and how many of them the last finished sync covered. */
  let committed = 0;
  let synced = 0;
  let waiting: Waiter[] = [];
  let inFlight = false;
  let closing: Promise<void> | undefined;
  let idle: (() => void) | undefined;

  const start = (): void => {
    inFlight = true;
    const covers = committed;
    sync(fd, (cause) => {
      inFlight = false;
      const error = cause === null ? null : new WalSyncError(cause);
      if (error === null) synced = covers;
      const still: Waiter[] = [];
      for (const w of waiting) {
        if (error !== null || w.upTo <= covers) w.done(error);
        else still.push(w);
      }
      waiting = still;
      if (waiting.length > 0) start();
      else idle?.();
    });
  };
  const wait = (upTo: number, done: Waiter['done']): void => {
    waiting.push({ upTo, done });
    if (!inFlight) start();
  };

  return {
    afterCommit(done) {
      wait(++committed, done);
    },
    whenSynced(done) {
      if (synced === committed) done(null);
      else wait(committed, done);
    },
    close() {
      closing ??= new Promise<void>((resolve) => {
        idle = resolve;
        if (!inFlight) resolve();
      }).then(() => new Promise<void>((resolve) => close(fd, () => resolve())));
      return closing;
    },
  };
}
