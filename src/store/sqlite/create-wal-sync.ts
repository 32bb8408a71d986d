import { close, fdatasync, fdatasyncSync, openSync } from 'node:fs';
import { performance } from 'node:perf_hooks';

/**
 * Makes large commits durable without the event loop waiting for the disk. The serving connection
 * commits with `synchronous = NORMAL` (its commit writes the WAL but does not sync it); each
 * commit then waits here for an fdatasync of the WAL file before its writers are answered. A
 * commit of many writes (a burst, a saturated closed loop) is synced on libuv's thread pool:
 * requests that arrive meanwhile are read and handled, and the group commit commits them when the
 * sync ends, so the disk's wait overlaps the next group's work instead of adding to it. A commit
 * of a few writes, while commits are small, is synced at once, on the event loop (see
 * `INLINE_BELOW`), unless the disk has been slow to sync (`INLINE_MAX_MS`); so is every commit
 * while the disk is fast (`FAST_SYNC_MS`).
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
   * before returning when no sync is in flight, syncs have not been slow (`INLINE_MAX_MS`), and
   * the commit and the recent ones held fewer than `INLINE_BELOW` writes or the disk is fast
   * (`FAST_SYNC_MS`).
   */
  afterCommit(done: (error: WalSyncError | null) => void, writes: number): void;
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
 * A commit of fewer writes than this syncs on the event loop, as `synchronous = FULL` would, while
 * commits are small on average too: with few writers waiting there is little to overlap, and the
 * hand-off to a thread and back costs more CPU and latency than it saves (at 2,000 req/s open loop,
 * 59–60% CPU this way against 70–73% with every sync on the thread pool). Under a load that makes
 * commits large, the small ones between them go to the thread pool as well: a sync on the spot
 * stops the event loop while the next group's requests wait to be read (closed loop, 50
 * connections, a disk syncing in 0.2–0.7 ms: 23,700–24,300 req/s with those small commits synced
 * on the spot, 24,200–25,200 without, ahead in 4 of 4 alternating pairs).
 */
const INLINE_BELOW = 8;
/**
 * While syncs take longer than this on average (a moving average over the last few), every sync
 * goes to the thread pool, however small its commit: on a slow disk (network block storage) the
 * event loop must not stop for each commit. Syncs on the thread pool are timed until the event
 * loop takes their answer, so under load they look slower than the disk is: while the syncs made
 * on the event loop are fast, they decide.
 */
const INLINE_MAX_MS = 1;
const AVERAGE_WEIGHT = 0.2;
/**
 * While syncs made on the event loop take less than this on average, a commit of any size syncs
 * on the spot: the disk's wait is shorter than the hand-off to the thread pool and back (a local
 * SSD syncing the WAL in 0.1 ms: 34,300 req/s closed loop this way against 31,900 with large
 * commits on the thread pool; on a disk syncing in 0.46 ms the thread pool gave 3–12% more, and on
 * one syncing in 0.2–0.7 ms about 5–8% more).
 */
const FAST_SYNC_MS = 0.15;
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
  /** Moving average of the writes a commit holds. */
  let averageWrites = 0;
  let pooled = 0;
  /** A moving average moved toward the latest value (a sync's time, a commit's writes). */
  const toward = (average: number, latest: number): number => average + (latest - average) * AVERAGE_WEIGHT;
  const took = (began: number): number => {
    const ms = now() - began;
    averageMs = toward(averageMs, ms);
    return ms;
  };
  const onTheSpot = (writes: number): boolean => {
    averageWrites = toward(averageWrites, writes);
    if (inFlight) return false;
    const slow = averageMs > INLINE_MAX_MS && (diskMs === undefined || diskMs > INLINE_MAX_MS);
    const small = writes < INLINE_BELOW && averageWrites < INLINE_BELOW;
    if (!slow && (small || (diskMs !== undefined && diskMs < FAST_SYNC_MS))) return true;
    // To the thread pool (a large commit, or a small one among large ones, while the disk is not
    // fast; any while it is slow), all but a probe.
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
    afterCommit(done, writes) {
      committed++;
      if (!onTheSpot(writes)) {
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
