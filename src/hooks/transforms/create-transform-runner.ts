import { readProcessRss } from './read-process-rss.js';
import { startTransformWorker, type TransformWorker } from './start-transform-worker.js';
import type { TransformInput, TransformSpec } from './transform-types.js';

export { TransformError } from './transform-types.js';
export type { TransformInput, TransformSpec } from './transform-types.js';

/** Calls a transform and resolves with what it returned. */
export type TransformRunner = (spec: TransformSpec, input: TransformInput) => Promise<unknown>;

/** A runner backed by transform processes, which `close()` ends. */
export type WorkerTransformRunner = TransformRunner & {
  /** Loads the module without calling it: the problem with the export `spec` names, or `null`. */
  probe(spec: TransformSpec): Promise<string | null>;
  close(): Promise<void>;
};

/** An idle transform process's memory is read at one in this many of the watchdog's looks. */
const IDLE_LOOK_EVERY = 10;

interface TransformRunnerOptions {
  /** A process with no call for this long is ended; the next call starts a fresh one. @default 60000 */
  idleMs?: number;
  /** How often the memory watchdog looks while processes are alive. @default 20 */
  watchdogMs?: number;
  /** Resident memory of a process by pid, for the watchdog. @default readProcessRss (Linux's /proc) */
  rssOf?: (pid: number) => number | undefined;
}

/**
 * Runs transforms in a pool of processes, one per `spec.key` (one per mapping) and cap, started on
 * first use and ended when idle: a mapping whose transform is stuck, loops, blocks in a system call,
 * exhausts descriptors or the thread pool, or allocates without bound fails only its own calls,
 * while every other mapping and the gateway keep answering. A call that does not settle within its
 * `timeoutMs` fails and its process is replaced. Each process's heap is capped at the mapping's
 * `maxMemoryMb`, and a watchdog ends a process whose resident memory grew by more than that. The
 * number of processes is bounded by the number of mappings with a transform.
 */
export function createTransformRunner(transformsDir: string, options: TransformRunnerOptions = {}): WorkerTransformRunner {
  const idleMs = options.idleMs ?? 60_000;
  const rssOf = options.rssOf ?? readProcessRss;
  const workers = new Map<string, TransformWorker>();
  const idleTimers = new Map<string, NodeJS.Timeout>();
  const watchdogMs = options.watchdogMs ?? 20;
  let watchdog: NodeJS.Timeout | undefined;

  let looks = 0;
  const watch = (): void => {
    if (workers.size === 0) {
      clearInterval(watchdog);
      watchdog = undefined;
      return;
    }
    // A process with calls in flight is looked at every time; an idle one (what a transform left
    // running after it answered) every IDLE_LOOK_EVERY times, since each look reads a file.
    const all = ++looks % IDLE_LOOK_EVERY === 0;
    for (const w of workers.values()) if (all || w.busy) w.checkMemory();
  };
  const settled = (key: string, worker: TransformWorker): void => {
    if (worker.busy || workers.get(key) !== worker) return;
    const timer = setTimeout(() => {
      idleTimers.delete(key);
      if (!worker.busy && workers.get(key) === worker) void worker.end('transform process ended while idle');
    }, idleMs);
    timer.unref();
    idleTimers.set(key, timer);
  };

  const send = async (spec: TransformSpec, input: TransformInput | null, shared = false): Promise<unknown> => {
    // A process is started with its mapping's cap, so a reload that changes the cap gets a new one;
    // the one with the old cap finishes its calls and ends once idle. Probes (every mapping's, at
    // start and reload) share one process: a process each held about 45 MB, 1.6 GB for 35 mappings.
    const key = `${shared ? '\u0000probe' : spec.key}\u0000${spec.maxMemoryMb}`;
    let worker = workers.get(key);
    if (worker === undefined || !worker.alive) {
      worker = startTransformWorker({
        transformsDir,
        maxMemoryMb: spec.maxMemoryMb,
        rssOf,
        onGone: (gone) => {
          if (workers.get(key) === gone) workers.delete(key);
        },
      });
      workers.set(key, worker);
    }
    clearTimeout(idleTimers.get(key));
    idleTimers.delete(key);
    if (watchdog === undefined) {
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
  // A probe that failed in the shared process may have failed for another module's sake (one that
  // hung or ended the process): it is tried again in the mapping's own, which says whose fault it is.
  run.probe = async (spec) => (await send(spec, null, true).catch(() => send(spec, null))) as string | null;

  run.close = async () => {
    clearInterval(watchdog);
    watchdog = undefined;
    for (const t of idleTimers.values()) clearTimeout(t);
    idleTimers.clear();
    const all = [...workers.values()];
    workers.clear();
    await Promise.all(all.map((w) => w.end('transform runner closed')));
  };
  return run;
}
