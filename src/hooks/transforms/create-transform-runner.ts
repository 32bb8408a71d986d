import { keepText, type Scrub } from '../../common/scrub-secrets.js';
import { TS } from './call-transform.js';
import { readProcessRss } from './read-process-rss.js';
import { startTransformWorker, TRANSFORM_WORKER_URL, type TransformWorker } from './start-transform-worker.js';
import { transformPermissionFlags, transformReadPaths } from './transform-permissions.js';
import { TransformError, type TransformInput, type TransformSpec } from './transform-types.js';

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
  /** Processes alive at once (`hooks.maxTransformProcesses`). @default 8 */
  maxProcesses?: number | undefined;
  /** Applied to every string a transform returns, before anything of it is stored. @default keepText */
  scrub?: Scrub;
  /** Node flags confining each process. @default the permission model over the transforms and their loader */
  permissionFlags?: readonly string[];
}

/** A transform's result with every string in it scrubbed (results are bounded in size and depth). */
function scrubResult(value: unknown, scrub: Scrub): unknown {
  if (typeof value === 'string') return scrub(value);
  if (Array.isArray(value)) return value.map((v) => scrubResult(v, scrub));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = scrubResult(v, scrub);
    return out;
  }
  return value;
}

/** `hooks.maxTransformProcesses` unset: each process holds about 45 MB at rest, and up to its cap beyond. */
const DEFAULT_MAX_TRANSFORM_PROCESSES = 8;

/**
 * Runs transforms in a pool of processes, one per `spec.key` (one per mapping) and cap, started on
 * first use and ended when idle: a mapping whose transform is stuck, loops, blocks in a system call,
 * exhausts descriptors or the thread pool, or allocates without bound fails only its own calls,
 * while every other mapping and the gateway keep answering. A call that does not settle within its
 * `timeoutMs` fails and its process is replaced. Each process's heap is capped at the mapping's
 * `maxMemoryMb`, and a watchdog ends a process whose resident memory grew by more than that. At
 * most `maxProcesses` are alive at once: a mapping whose process is not among them ends the one idle
 * the longest, or, with every one busy, waits for one to settle (within its call's `timeoutMs`).
 * Without the bound, 80 mappings called at once started 80 processes (3.5 GB at rest), and their
 * start kept the gateway's health check waiting 8 s.
 */
export function createTransformRunner(
  transformsDir: string,
  options: TransformRunnerOptions = {},
): WorkerTransformRunner {
  const idleMs = options.idleMs ?? 60_000;
  const rssOf = options.rssOf ?? readProcessRss;
  const workers = new Map<string, TransformWorker>();
  const idleTimers = new Map<string, NodeJS.Timeout>();
  const watchdogMs = options.watchdogMs ?? 20;
  const maxProcesses = options.maxProcesses ?? DEFAULT_MAX_TRANSFORM_PROCESSES;
  const scrub = options.scrub ?? keepText;
  const permissionFlags =
    options.permissionFlags ?? transformPermissionFlags(transformReadPaths(transformsDir, TRANSFORM_WORKER_URL));
  /**
   * A TypeScript module loads through loader hooks (`module.register`), which Node runs on a worker
   * thread of the process's own: such a process is allowed workers, and the guard in it
   * (guard-worker-process.ts) takes `Worker` away from the transform before it loads. Node's
   * warning about the flag (twice a process, on the gateway's stderr) says no more than this.
   */
  const tsFlags =
    permissionFlags.length === 0
      ? permissionFlags
      : [
          ...permissionFlags,
          '--allow-worker',
          ...(permissionFlags.some((f) => f.startsWith('--disable-warning='))
            ? ['--disable-warning=SecurityWarning']
            : []),
        ];
  const flagsFor = (spec: TransformSpec): readonly string[] => (TS.test(spec.file) ? tsFlags : permissionFlags);
  let watchdog: NodeJS.Timeout | undefined;
  /** When each process last settled a call, for ending the one idle the longest. */
  const lastUsed = new Map<TransformWorker, number>();
  /** Calls waiting for a process to settle or end, so one may start for them. */
  let waiting: Array<() => void> = [];
  const wake = (): void => {
    const woken = waiting;
    waiting = [];
    for (const w of woken) w();
  };

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
    lastUsed.set(worker, performance.now());
    wake();
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
    // Its environment too: a reload that changes `transform.env` gets a new process; and whether it
    // loads TypeScript, whose loader needs a thread of its own (see `flagsFor`).
    const ts = TS.test(spec.file) ? '\u0000ts' : '';
    const key = `${shared ? '\u0000probe' : `${spec.key}\u0000${JSON.stringify(spec.env ?? {})}`}\u0000${spec.maxMemoryMb}${ts}`;
    let worker = workers.get(key);
    if (worker === undefined || !worker.alive) worker = await startWhenRoom(spec, key);
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
  /**
   * The process for `key`: one started meanwhile by another call, or one started once fewer than
   * `maxProcesses` are alive (after ending the one idle the longest, or waiting for one to settle).
   * The count is checked and the process started in one step, so calls woken together cannot pass it.
   */
  const startWhenRoom = async (spec: TransformSpec, key: string): Promise<TransformWorker> => {
    const deadline = performance.now() + spec.timeoutMs;
    for (;;) {
      const started = workers.get(key);
      if (started?.alive) return started;
      if (workers.size < maxProcesses) {
        const worker = startTransformWorker({
          transformsDir,
          maxMemoryMb: spec.maxMemoryMb,
          permissionFlags: flagsFor(spec),
          // Probes share a process and only load modules: no mapping's environment goes there.
          env: key.startsWith('\u0000probe') ? {} : (spec.env ?? {}),
          rssOf,
          onGone: (gone) => {
            if (workers.get(key) === gone) workers.delete(key);
            lastUsed.delete(gone);
            wake();
          },
        });
        workers.set(key, worker);
        // Not idle before its first call settles: another call woken now must not end it.
        lastUsed.set(worker, Number.POSITIVE_INFINITY);
        return worker;
      }
      let oldest: [string, TransformWorker] | undefined;
      for (const entry of workers) {
        if (entry[1].busy || lastUsed.get(entry[1]) === Number.POSITIVE_INFINITY) continue;
        if (oldest === undefined || (lastUsed.get(entry[1]) ?? 0) < (lastUsed.get(oldest[1]) ?? 0)) oldest = entry;
      }
      if (oldest !== undefined) {
        workers.delete(oldest[0]);
        clearTimeout(idleTimers.get(oldest[0]));
        idleTimers.delete(oldest[0]);
        void oldest[1].end('transform process ended: its place went to another mapping (hooks.maxTransformProcesses)');
        continue;
      }
      const left = deadline - performance.now();
      if (left <= 0) {
        throw new TransformError(
          `transform timed out after ${spec.timeoutMs} ms waiting for one of ${maxProcesses} busy transform processes (hooks.maxTransformProcesses): ${spec.file}`,
        );
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        waiting.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  };
  const run = (async (spec: TransformSpec, input: TransformInput): Promise<unknown> =>
    scrubResult(await send(spec, input), scrub)) as WorkerTransformRunner;
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
