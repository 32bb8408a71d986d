import { Worker } from 'node:worker_threads';
import type { ListRequestsOptions, RequestRecord } from '../request-record.js';
import type { QueueRow, SessionRow } from '../rows.js';
import type { DigestOptions, PendingDigest } from '../maintenance-types.js';

/** The reads a read thread makes. */
export type ReadRequest =
  | { kind: 'digest'; sessionKey: string; options: DigestOptions }
  | { kind: 'queue' }
  | { kind: 'sessions'; limit: number }
  | { kind: 'session'; key: string }
  | { kind: 'requests'; options: ListRequestsOptions };

/** What a read thread answers to `R`. */
export type ReadAnswer<R extends ReadRequest> = R extends { kind: 'digest' }
  ? PendingDigest | null
  : R extends { kind: 'queue' }
    ? QueueRow
    : R extends { kind: 'sessions' }
      ? SessionRow[]
      : R extends { kind: 'requests' }
        ? RequestRecord[]
        : SessionRow;

/** Makes one read on the read thread. */
export type ReadOnThread = <R extends ReadRequest>(read: R) => Promise<ReadAnswer<R>>;

/** What the read thread posts back for the read with the same id (read-worker.ts). */
export type ReadReply = { id: number; value: unknown } | { id: number; error: string };

export interface ReadThread {
  read: ReadOnThread;
  /** Threads started so far (each ends after `idleMs` without a read). */
  readonly started: number;
  /** Ends the thread, its connection closed; later reads are refused. */
  close(): Promise<void>;
}

/** A thread with no read for this long ends, and with it its connection and memory. */
const READ_THREAD_IDLE_MS = 30_000;

/** At close, a read in progress gets this long before the thread is cut off. */
const CLOSE_WAIT_MS = 5_000;

/**
 * The reads that may cover a million rows (a backlog's digest, queue depths or session listings
 * under a flood, a filtered listing of a long request log) are made on a thread with a read-only
 * connection of its own (read-worker.ts), so the serving thread never stops for them. The thread
 * is started by the first read and kept while reads come (under a flood of `now` wakes a digest
 * turn follows another, and a thread each cost about 50 ms of CPU and 10 MB of short-lived memory),
 * then ended after `idleMs` without one: reads come seldom otherwise, and a thread kept for them
 * would hold its memory all the time. Reads are answered in order, one at a time; a thread that
 * fails (its heap limit, a database it cannot open) fails the reads it held, and the next read
 * starts another.
 */
export function createReadThread(path: string, idleMs = READ_THREAD_IDLE_MS): ReadThread {
  let thread: Worker | null = null;
  let started = 0;
  let closed = false;
  let nextId = 0;
  let idle: NodeJS.Timeout | undefined;
  /** Threads told to end and not yet gone: close waits for them too (their connections must close first). */
  const ending = new Set<Promise<void>>();
  const waiting = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();

  const failAll = (error: Error): void => {
    for (const w of waiting.values()) w.reject(error);
    waiting.clear();
  };
  // Ends the thread gracefully: it closes its connection, then exits.
  const retire = (t: Worker): void => {
    if (thread === t) thread = null;
    const exited = new Promise<void>((resolve) => t.once('exit', () => resolve()));
    ending.add(exited);
    void exited.then(() => ending.delete(exited));
    t.postMessage('close');
  };
  const start = (): Worker => {
    const t = new Worker(new URL('./read-worker.js', import.meta.url), {
      workerData: { path },
      // SQLite sorts and groups in its own memory; the thread's heap holds one answer at a time.
      resourceLimits: { maxOldGenerationSizeMb: 32, maxYoungGenerationSizeMb: 4 },
    });
    started += 1;
    t.on('message', (reply: ReadReply) => {
      const w = waiting.get(reply.id);
      if (w === undefined) return;
      waiting.delete(reply.id);
      if ('error' in reply) w.reject(new Error(reply.error));
      else w.resolve(reply.value);
      if (waiting.size === 0 && thread === t) {
        // Nothing left to answer: the thread no longer keeps the process alive, and ends if no read comes.
        t.unref();
        idle = setTimeout(() => retire(t), idleMs);
        idle.unref();
      }
    });
    // A thread that failed or exited takes the reads it held with it; the next read starts another.
    const gone = (error: Error): void => {
      if (thread !== t) return;
      thread = null;
      clearTimeout(idle);
      failAll(error);
    };
    t.on('error', (error) =>
      gone(error instanceof Error ? error : new Error(`the read thread failed: ${String(error)}`)),
    );
    t.on('exit', (code) => gone(new Error(`the read thread exited with code ${code} before answering`)));
    return t;
  };

  return {
    read(read) {
      if (closed) return Promise.reject(new Error('store is closed'));
      clearTimeout(idle);
      thread ??= start();
      thread.ref();
      const id = nextId++;
      const answer = new Promise<unknown>((resolve, reject) => waiting.set(id, { resolve, reject }));
      thread.postMessage({ id, read });
      return answer as Promise<never>;
    },
    get started() {
      return started;
    },
    async close() {
      closed = true;
      clearTimeout(idle);
      const t = thread;
      if (t !== null) {
        retire(t);
        failAll(new Error('store is closed'));
      }
      // A read in progress is let finish (the connection closes cleanly after it), within a bound.
      const cut = t === null ? undefined : setTimeout(() => void t.terminate(), CLOSE_WAIT_MS);
      await Promise.all(ending);
      clearTimeout(cut);
    },
  };
}
