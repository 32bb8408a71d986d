import { close, fdatasync, fdatasyncSync, openSync } from 'node:fs';
import { performance } from 'node:perf_hooks';

/**
 * Makes commits durable without the event loop waiting on a slow disk. The serving connection
 * commits with `synchronous = NORMAL` (its commit writes the WAL but does not sync it); each commit
 * then waits here for an fdatasync of the WAL file before its writers are answered. While the disk
 * syncs quickly (`INLINE_MAX_MS`), the sync is made at once, on the event loop, as
 * `synchronous = FULL` would. While it is slow (network block storage), syncs are made on libuv's
 * thread pool: requests that arrive meanwhile are read and handled, and the group commit commits
 * them when the sync ends, so the disk's wait overlaps the next group's work instead of stopping
 * the event loop at every commit.
 *
 * What is acknowledged is on disk exactly as with `synchronous = FULL`: an fdatasync of the WAL
 * (any descriptor of the file) flushes every frame written before it, and SQLite still syncs the
 * WAL's header when it starts the WAL over, and the WAL and the database around each checkpoint.
 * Another connection, or a read outside a write, may see a commit before its sync: whatever answers
 * a client from such a read waits for `whenSynced` first.
 */
export interface WalSync {
  /**
   * Calls `done` once everything committed before this call is on disk, or with the sync's error:
   * before returning when no sync is in flight and syncs have not been slow (`INLINE_MAX_MS`).
   */
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

/**
 * While syncs take longer than this on average (a moving average over the last few), they are made
 * on the thread pool: on a slow disk the event loop must not stop for each commit. Below it, every
 * commit syncs on the spot, however large. A sync on the thread pool costs more than the disk's
 * wait when the disk is this fast: under a saturated closed loop the connections split into two
 * groups, one read and committed while the other's sync runs, so each sync covers half as many
 * requests, and the disk is flushed twice as often. Measured on a 2-core VM whose disk synced a
 * commit of 40–50 writes in about 0.5 ms (50 connections, `now` wakes, 10 alternating pairs): on
 * the spot, 36 requests a flush against 21, 60 µs of CPU a request against 72 (less in all 10
 * pairs), 15,100 req/s against 14,600 (ahead in 7 of 10); `next-heartbeat` wakes, 12 pairs: ahead
 * in 10. Syncs on the thread pool are timed until the event loop takes their answer, so under load
 * they look slower than the disk is: while the syncs made on the event loop are fast, they decide.
 */
const INLINE_MAX_MS = 1;
const AVERAGE_WEIGHT = 0.2;
/**
 * Of the commits sent to the thread pool, every this many is synced on the spot instead, so the
 * disk's speed is measured again (a sync on the thread pool is timed with the event loop's delay
 * in answering it, and says little about the disk). With one sync in flight at a time, this stops
 * the event loop for at most about 1% of the time, however slow the disk.
 */
const PROBE_EVERY = 100;

/** How the syncs are made and timed: `fs.fdatasync`, `fs.fdatasyncSync`, `performance.now`. Tests pass their own. */
export interface WalSyncIo {
  sync: typeof fdatasync;
  syncNow: typeof fdatasyncSync;
  now: () => number;
}

interface Waiter {
  /** The commit count this waiter needs synced. */
  upTo: number;
  done: (error: WalSyncError | null) => void;
}

/** Opens the WAL file at `walPath` (the connection must already be in WAL mode) for syncing. */
export function createWalSync(walPath: string, io: Partial<WalSyncIo> = {}): WalSync {
  const { sync = fdatasync, syncNow = fdatasyncSync, now = (): number => performance.now() } = io;
  // fdatasync flushes the file's data whichever descriptor wrote it; nothing is written through
  // this one, but some systems (Windows) sync only a descriptor opened for writing.
  const fd = openSync(walPath, 'r+');
  /** Commits reported so far, and how many of them the last finished sync covered. */
  let committed = 0;
  let synced = 0;
  let waiting: Waiter[] = [];
  let inFlight = false;
  let closing: Promise<void> | undefined;
  let idle: (() => void) | undefined;
  /** Moving average of how long a sync takes, in ms (on the thread pool: until its callback runs). */
  let averageMs = 0;
  /** Moving average of the syncs made on the event loop (the disk's own time); unknown before the first. */
  let diskMs: number | undefined;
  let pooled = 0;
  /** A moving average moved toward the latest value (a sync's time). */
  const toward = (average: number, latest: number): number => average + (latest - average) * AVERAGE_WEIGHT;
  const took = (began: number): number => {
    const ms = now() - began;
    averageMs = toward(averageMs, ms);
    return ms;
  };
  const onTheSpot = (): boolean => {
    if (inFlight) return false;
    // The first commit is always synced here, so once any sync has been timed the disk has been too.
    const slow = averageMs > INLINE_MAX_MS && diskMs! > INLINE_MAX_MS;
    if (!slow) return true;
    // To the thread pool while the disk is slow, all but a probe.
    return ++pooled % PROBE_EVERY === 0;
  };

  const start = (): void => {
    inFlight = true;
    const covers = committed;
    const began = now();
    sync(fd, (cause) => {
      inFlight = false;
      took(began);
      const error = cause === null ? null : new WalSyncError(cause);
      if (error === null) synced = covers;
      const due: Waiter[] = [];
      const still: Waiter[] = [];
      for (const w of waiting) (error !== null || w.upTo <= covers ? due : still).push(w);
      waiting = still;
      // A waiter may commit again from here (the group commit's next batch) and start the next sync.
      for (const w of due) w.done(error);
      if (inFlight) return;
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
      committed++;
      if (!onTheSpot()) {
        wait(committed, done);
        return;
      }
      let error: WalSyncError | null = null;
      const began = now();
      try {
        syncNow(fd);
        synced = committed;
      } catch (cause) {
        error = new WalSyncError(cause as Error);
      }
      const ms = took(began);
      diskMs = diskMs === undefined ? ms : toward(diskMs, ms);
      done(error);
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
