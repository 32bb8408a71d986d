import { Worker } from 'node:worker_threads';
import { packRecordsLater } from './request-batch.js';

/** What one checkpoint found, as SQLite's `wal_checkpoint` reports it (in frames, i.e. pages). */
export interface CheckpointReport {
  /** True when the WAL had grown past its bound and the writer was held for a full checkpoint. */
  held: boolean;
  /** 1 when the checkpoint could not copy everything (a reader was in the way). */
  busy: number;
  /** Frames in the WAL. */
  log: number;
  /** Frames of it now in the database file. */
  checkpointed: number;
}

/** What the thread is started with. */
export interface CheckpointerData {
  path: string;
  sync: 'FULL' | 'NORMAL';
  intervalMs: number;
  restartFrames: number;
}

/** From the store to the thread. */
export type CheckpointerRequest =
  | { kind: 'checkpoint'; id: number }
  | { kind: 'pack'; id: number; json: string }
  | { kind: 'held' }
  | { kind: 'stop' };
/** From the thread to the store. */
export type CheckpointerMessage =
  | { kind: 'ready' }
  | { kind: 'checkpointed'; id: number; report: CheckpointReport }
  | { kind: 'failed'; id: number; message: string }
  | { kind: 'packed'; id: number; packed: ArrayBuffer }
  | { kind: 'pack-failed'; id: number }
  | { kind: 'hold' }
  | { kind: 'release' };

interface CheckpointerOptions {
  /** The database file; the serving store's connection has it open in WAL mode. */
  path: string;
  /** The store's `synchronous`: a checkpoint syncs the WAL before and the database after. */
  sync: 'FULL' | 'NORMAL';
  /** How often the thread checkpoints. @default 200 */
  intervalMs?: number;
  /** Past this many frames in the WAL, a checkpoint holds the writer to finish (see below). @default 4096 (16 MB of 4 KB pages) */
  restartFrames?: number;
  /** Holds the store's commits back (the group commit's `hold`); `release` lets them go. */
  hold: () => void;
  release: () => void;
  /** The thread has its connection open and checkpoints from now on. */
  onReady: () => void;
  /** The thread could not open the database, or ended without being stopped. Called at most once. */
  onFailed: (error: Error) => void;
}

/** The checkpoint thread, seen from the store. */
export interface Checkpointer {
  /** Checkpoints now, as the timer does; resolves with what it found. */
  checkpointNow(): Promise<CheckpointReport>;
  /**
   * Compresses a request batch's JSON text on the thread and calls back with it (see
   * `packRecordsLater`, which it stands in for): zlib's own hand-off to libuv's pool took the
   * serving thread about 580 µs a batch of 512 records, a message to this thread about 46. Should
   * the thread fail or stop first, the text is compressed on libuv's pool after all.
   */
  pack(json: string, done: (records: string | Buffer) => void): void;
  /** Ends the thread after the checkpoint in flight, its connection closed. Resolves once it is gone. */
  stop(): Promise<void>;
}

/**
 * A hold the thread does not release within this is released by the store (the thread is slow or
 * gone): commits go on, and that checkpoint just does not start the WAL over.
 */
const HOLD_MAX_MS = 100;

/**
 * Starts the thread that checkpoints a WAL database from its own connection, so the serving
 * connection (autocheckpoint off) never copies pages into the database file, nor waits for that
 * file's fsync, while requests wait for their commit.
 *
 * Every `intervalMs` the thread runs a PASSIVE checkpoint, which never blocks the writer: it
 * copies what was committed since the last one. The writer starts the WAL over (writing it from
 * its beginning, so it stops growing) only when a checkpoint has copied everything before its
 * next commit, and under steady load a commit nearly always lands during the checkpoint's own
 * fsync. So once the WAL holds `restartFrames`, the thread asks the store to hold its commits
 * (the group commit queues them; this thread keeps serving), checkpoints the few frames written
 * since, and releases: the next commit starts the WAL over. The writer never waits on a lock for
 * it, and requests arriving meanwhile wait only for that last small checkpoint.
 */
export function startCheckpointer(options: CheckpointerOptions): Checkpointer {
  const data: CheckpointerData = {
    path: options.path,
    sync: options.sync,
    intervalMs: options.intervalMs ?? 200,
    restartFrames: options.restartFrames ?? 4096,
  };
  const thread = new Worker(new URL('./checkpoint-worker.js', import.meta.url), {
    workerData: data,
    // The thread allocates next to nothing; a small heap keeps its share of the RSS small.
    resourceLimits: { maxOldGenerationSizeMb: 16, maxYoungGenerationSizeMb: 2 },
  });
  // Stopped by the store's close; the process need not wait for it otherwise.
  thread.unref();
  const pending = new Map<number, { resolve: (r: CheckpointReport) => void; reject: (e: Error) => void }>();
  const packing = new Map<number, { json: string; done: (records: string | Buffer) => void }>();
  let nextId = 1;
  let stopping = false;
  let failed = false;
  let holdTimer: NodeJS.Timeout | undefined;
  const release = (): void => {
    if (holdTimer === undefined) return;
    clearTimeout(holdTimer);
    holdTimer = undefined;
    options.release();
  };
  /** Compresses what the thread was given and has not answered, on libuv's pool instead. */
  const packElsewhere = (): void => {
    for (const { json, done } of packing.values()) packRecordsLater(json, done);
    packing.clear();
  };
  const fail = (error: Error): void => {
    release();
    for (const p of pending.values()) p.reject(error);
    pending.clear();
    packElsewhere();
    if (stopping || failed) return;
    failed = true;
    options.onFailed(error);
  };
  thread.on('message', (m: CheckpointerMessage) => {
    switch (m.kind) {
      case 'ready':
        if (!stopping && !failed) options.onReady();
        return;
      case 'hold':
        // Called between tasks, so no transaction of the store is open: the thread may go ahead.
        options.hold();
        holdTimer ??= setTimeout(release, HOLD_MAX_MS);
        thread.postMessage({ kind: 'held' } satisfies CheckpointerRequest);
        return;
      case 'release':
        release();
        return;
      case 'packed':
      case 'pack-failed': {
        const p = packing.get(m.id);
        packing.delete(m.id);
        if (p === undefined) return;
        if (m.kind === 'packed') p.done(Buffer.from(m.packed));
        else packRecordsLater(p.json, p.done);
        return;
      }
      case 'checkpointed':
      case 'failed': {
        const p = pending.get(m.id);
        pending.delete(m.id);
        if (m.kind === 'checkpointed') p?.resolve(m.report);
        else p?.reject(new Error(m.message));
        return;
      }
    }
  });
  thread.on('error', fail);
  const exited = new Promise<void>((resolve) => {
    thread.once('exit', () => {
      fail(new Error('the checkpoint thread ended'));
      resolve();
    });
  });

  return {
    checkpointNow() {
      if (stopping || failed) return Promise.reject(new Error('the checkpoint thread is not running'));
      const id = nextId++;
      return new Promise((resolve, reject) => {
        pending.set(id, { resolve, reject });
        thread.postMessage({ kind: 'checkpoint', id } satisfies CheckpointerRequest);
      });
    },
    pack(json, done) {
      if (stopping || failed) {
        packRecordsLater(json, done);
        return;
      }
      const id = nextId++;
      packing.set(id, { json, done });
      thread.postMessage({ kind: 'pack', id, json } satisfies CheckpointerRequest);
    },
    async stop() {
      if (!stopping) {
        stopping = true;
        // Waiting for the thread's exit must keep the process alive until it comes.
        thread.ref();
        thread.postMessage({ kind: 'stop' } satisfies CheckpointerRequest);
      }
      await exited;
    },
  };
}
