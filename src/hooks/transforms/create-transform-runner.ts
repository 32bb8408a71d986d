import { performance } from 'node:perf_hooks';
import { startTransformWorker, type TransformWorker } from './start-transform-worker.js';
import type { TransformInput, TransformSpec } from './transform-types.js';

export { TransformError } from './transform-types.js';
export type { TransformInput, TransformSpec } from './transform-types.js';

/** Calls a transform and resolves with what it returned. */
export type TransformRunner = (spec: TransformSpec, input: TransformInput) => Promise<unknown>;

/**
 * A runner backed by worker threads, which `close()` ends. Call it before the process should
 * exit: once a worker registered the TypeScript loader, its loader thread keeps the process alive
 * even though the worker itself is unref'd.
 */
export type WorkerTransformRunner = TransformRunner & {
  /** Loads the module without calling it: the problem with the export `spec` names, or `null`. */
  probe(spec: TransformSpec): Promise<string | null>;
  close(): Promise<void>;
};

/** The watchdog skips a look that comes this many intervals after the last one. */
const LATE_LOOKS = 3;

interface TransformRunnerOptions {
  /** A worker with no call for this long is ended; the next call starts a fresh one. @default 60000 */
  idleMs?: number;
  /** How often the memory watchdog looks while calls are in flight. @default 20 */
  watchdogMs?: number;
  /** Resident memory of the process, for the watchdog. @default process.memoryUsage.rss */
  rss?: () => number;
}

/**
 * Runs transforms in a pool of worker threads, one per `spec.key` (one per mapping) and cap, started on
 * first use and ended when idle: a mapping whose transform is stuck, loops or allocates without
 * bound fails only its own calls, while every other mapping keeps answering. A call that does not
 * settle within its `timeoutMs` fails and its worker is replaced. Each worker's heap is capped at
 * the mapping's `maxMemoryMb`; a watchdog ends a worker whose buffers pass the cap, or that is
 * stuck in synchronous code while the process grows by more than the cap. The number of workers
 * is bounded by the number of mappings with a transform.
 */
export function createTransformRunner(transformsDir: string, options: TransformRunnerOptions = {}): WorkerTransformRunner {
  const idleMs = options.idleMs ?? 60_000;
  const rss = options.rss ?? (() => process.memoryUsage.rss());
  const workers = new Map<string, TransformWorker>();
  const idleTimers = new Map<string, NodeJS.Timeout>();
  const watchdogMs = options.watchdogMs ?? 20;
  let watchdog: NodeJS.Timeout | undefined;
  let lookedAt = 0;

  const watch = (): void => {
    const busy = [...workers.values()].filter((w) => w.busy);
    if (busy.length === 0) {
      clearInterval(watchdog);
      watchdog = undefined;
      return;
    }
    // A look that comes late means the event loop was held up: the workers' reports may still be
    // waiting in its queue, so their silence says nothing yet. The next look, on time, decides.
    const at = performance.now();
    const late = at - lookedAt > LATE_LOOKS * watchdogMs;
    lookedAt = at;
    if (late) return;
    const now = rss();
    for (const w of busy) w.checkMemory(now);
  };
  const settled = (key: string, worker: TransformWorker): void => {
    if (worker.busy || workers.get(key) !== worker) return;
    const timer = setTimeout(() => {
      idleTimers.delete(key);
      if (!worker.busy && workers.get(key) === worker) void worker.end('transform worker ended while idle');
    }, idleMs);
    timer.unref();
    idleTimers.set(key, timer);
  };

  const send = async (spec: TransformSpec, input: TransformInput | null): Promise<unknown> => {
    // A worker is started with its mapping's cap, so a reload that changes the cap gets a new worker;
    // the one with the old cap finishes its calls and ends once idle.
    const key = `${spec.key}\u0000${spec.maxMemoryMb}`;
    let worker = workers.get(key);
    if (worker === undefined || !worker.alive) {
      worker = startTransformWorker({
        transformsDir,
        maxMemoryMb: spec.maxMemoryMb,
        rss,
        onGone: (gone) => {
          if (workers.get(key) === gone) workers.delete(key);
        },
      });
      workers.set(key, worker);
    }
    clearTimeout(idleTimers.get(key));
    idleTimers.delete(key);
    if (watchdog === undefined) {
      lookedAt = performance.now();
      watchdog = setInterval(watch, watchdogMs);
      watchdog.unref();
    }
    const current = worker;
    try {
      return await current.call(spec, input);
    } finally {
      settled(key, current);
    }
  };
  const run = ((spec: TransformSpec, input: TransformInput): Promise<unknown> => send(spec, input)) as WorkerTransformRunner;
  run.probe = async (spec) => (await send(spec, null)) as string | null;

  run.close = async () => {
    clearInterval(watchdog);
    for (const t of idleTimers.values()) clearTimeout(t);
    idleTimers.clear();
    const all = [...workers.values()];
    workers.clear();
    await Promise.all(all.map((w) => w.end('transform runner closed')));
  };
  return run;
}
