import { performance } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import { checkTransformResult } from './check-transform-result.js';
import { TransformError, type SharedInput, type TransformCall, type TransformInput, type TransformSpec, type WorkerMessage } from './transform-types.js';

/** A worker silent for this long while it has calls in flight is stuck in synchronous code. */
const SILENT_MS = 100;
const MB = 1024 * 1024;

interface Pending {
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
  timer: NodeJS.Timeout;
  maxResultBytes: number;
}

/** One transform worker thread, owned by the pool; its failures fail only its own calls. */
export interface TransformWorker {
  /** Calls the transform; with `null` only loads it and answers the problem with its export, or `null`. */
  call(spec: TransformSpec, input: TransformInput | null): Promise<unknown>;
  /** Calls in flight. */
  readonly busy: boolean;
  /** False once the thread ended or is ending. */
  readonly alive: boolean;
  /**
   * The watchdog's check, given the process RSS now: ends the worker when its buffers are over its
   * cap, or when it has been silent in synchronous code while the process grew by more than its cap.
   */
  checkMemory(rssBytes: number): void;
  /** Ends the thread; calls in flight fail with `reason`. */
  end(reason: string): Promise<void>;
}

/**
 * Starts a worker thread whose JS heap is capped at `maxMemoryMb` by V8 (`resourceLimits`; going
 * over ends the thread with `ERR_WORKER_OUT_OF_MEMORY`). Buffers live outside that heap, so the
 * worker reports them and the pool's watchdog calls `checkMemory`.
 */
export function startTransformWorker(options: {
  transformsDir: string;
  maxMemoryMb: number;
  rss: () => number;
  /** Called once when the thread is gone, whatever the reason. */
  onGone: (worker: TransformWorker) => void;
}): TransformWorker {
  const capBytes = options.maxMemoryMb * MB;
  const thread = new Worker(new URL('./transform-worker.js', import.meta.url), {
    workerData: { transformsDir: options.transformsDir },
    resourceLimits: {
      maxOldGenerationSizeMb: options.maxMemoryMb,
      maxYoungGenerationSizeMb: Math.max(2, Math.min(16, Math.floor(options.maxMemoryMb / 8))),
    },
  });
  thread.unref();
  const pending = new Map<number, Pending>();
  let nextId = 1;
  let alive = true;
  /** When the worker last spoke, and the process RSS then: growth while it is silent is its doing. */
  let heardAt = performance.now();
  let rssWhenHeard = options.rss();
  /**
   * Whether the thread has spoken at all. Until it has, it is still starting (a new isolate grows
   * the process), not stuck: it reports as soon as a call reaches it, before the transform runs.
   */
  let started = false;

  const gone = (reason: string): void => {
    if (!alive) return;
    alive = false;
    for (const p of pending.values()) {
      clearTimeout(p.timer);
      p.reject(new TransformError(reason));
    }
    pending.clear();
    options.onGone(handle);
  };
  const heard = (): void => {
    heardAt = performance.now();
    rssWhenHeard = options.rss();
  };

  thread.on('message', (message: WorkerMessage) => {
    started = true;
    heard();
    if (message.kind === 'memory') {
      if (message.externalBytes > capBytes) {
        void handle.end(`transform worker ended: ${Math.round(message.externalBytes / MB)} MB of buffers, over its ${options.maxMemoryMb} MB cap (transform.maxMemoryMb)`);
      }
      return;
    }
    const p = pending.get(message.id);
    if (p === undefined) return;
    pending.delete(message.id);
    clearTimeout(p.timer);
    if (!message.ok) {
      p.reject(new TransformError(message.message, message.cause === undefined ? undefined : { cause: message.cause }));
      return;
    }
    // The worker checked already; a transform could have posted on its port itself.
    const refused = checkTransformResult(message.result, p.maxResultBytes);
    if (refused === null) p.resolve(message.result);
    else p.reject(new TransformError(refused));
  });
  thread.on('error', (error: Error & { code?: string }) => {
    gone(error.code === 'ERR_WORKER_OUT_OF_MEMORY'
      ? `transform worker ended: its heap passed its ${options.maxMemoryMb} MB cap (transform.maxMemoryMb)`
      : `transform worker failed: ${error.message}`);
  });
  thread.on('exit', (code) => gone(`transform worker exited (code ${code})`));

  /** The input of the `forEach` items this worker keeps, by identity of its parts (see `TransformCall`). */
  let kept: (SharedInput & { ref: number }) | undefined;
  let nextRef = 1;
  const encodeCall = (id: number, spec: TransformSpec, input: TransformInput | null): TransformCall => {
    const common = { id, file: spec.file, exportName: spec.exportName };
    if (input === null) return { ...common, probe: true };
    const { maxResultBytes } = spec;
    if (input.item === undefined) return { ...common, input, maxResultBytes };
    if (kept !== undefined && sameShared(kept, input)) return { ...common, shared: kept.ref, item: input.item, maxResultBytes };
    const { payload, headers, url, path } = input;
    kept = { payload, headers, url, path, ref: nextRef++ };
    return { ...common, input, keep: kept.ref, maxResultBytes };
  };

  const handle: TransformWorker = {
    get busy() {
      return pending.size > 0;
    },
    get alive() {
      return alive;
    },
    call(spec, input) {
      if (!alive) return Promise.reject(new TransformError('transform worker has ended'));
      if (pending.size === 0) heard();
      const id = nextId++;
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          pending.delete(id);
          reject(new TransformError(`transform timed out after ${spec.timeoutMs} ms: ${spec.file}`));
          // It may be stuck in a synchronous loop: ending the thread is the only way to stop it.
          void handle.end('transform worker restarted after another call to it timed out');
        }, spec.timeoutMs);
        pending.set(id, { resolve, reject, timer, maxResultBytes: spec.maxResultBytes });
        thread.postMessage(encodeCall(id, spec, input));
      });
    },
    checkMemory(rssBytes) {
      if (!alive || !started || pending.size === 0 || performance.now() - heardAt < SILENT_MS) return;
      const grown = rssBytes - rssWhenHeard;
      if (grown > capBytes) {
        void handle.end(`transform worker ended: the process grew by ${Math.round(grown / MB)} MB while it was stuck, over its ${options.maxMemoryMb} MB cap (transform.maxMemoryMb)`);
      }
    },
    async end(reason) {
      gone(reason);
      await thread.terminate();
    },
  };
  return handle;
}

/** Whether `input` shares `kept`'s payload and headers (the same objects) and its url and path. */
function sameShared(kept: SharedInput, input: TransformInput): boolean {
  return kept.payload === input.payload && kept.headers === input.headers && kept.url === input.url && kept.path === input.path;
}
