import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { Readable, Writable } from 'node:stream';
import { checkTransformResult } from './check-transform-result.js';
import { readLines } from './read-lines.js';
import {
  TransformError,
  type SharedInput,
  type TransformCall,
  type TransformInput,
  type TransformSpec,
  type WorkerMessage,
} from './transform-types.js';

const MB = 1024 * 1024;
/** The transform process's code, beside this module (in the compiled tree and in the bundle). */
export const TRANSFORM_WORKER_URL = new URL('./transform-worker.js', import.meta.url);
/** Room in an answer's line beyond the result itself (its JSON envelope, an error's message). */
const ANSWER_ENVELOPE_BYTES = 64 * 1024;
/**
 * Resident memory allowed the TypeScript loader (its thread and the compiler) beyond a process's
 * cap: it took 19-20 MB once it had compiled a first module.
 */
const TS_LOADER_BYTES = 32 * MB;
/** How long an ended process is waited for (one blocked where even SIGKILL waits is left to the kernel). */
const EXIT_WAIT_MS = 2000;

interface Pending {
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
  timer: NodeJS.Timeout;
  maxResultBytes: number;
}

/** One transform process, owned by the pool; its failures fail only its own calls. */
export interface TransformWorker {
  /** Calls the transform; with `null` only loads it and answers the problem with its export, or `null`. */
  call(spec: TransformSpec, input: TransformInput | null): Promise<unknown>;
  /** Calls in flight. */
  readonly busy: boolean;
  /** False once the process ended or is ending. */
  readonly alive: boolean;
  /** The watchdog's look: ends the process once its resident memory grew past its cap. */
  checkMemory(): void;
  /** Ends the process (SIGKILL); calls in flight fail with `reason`. */
  end(reason: string): Promise<void>;
}

/**
 * Starts a transform process (transform-worker.ts). Its JS heap is capped at `maxMemoryMb` by V8's
 * flag (going over ends the process); everything else it holds (buffers, array buffers shared or
 * not, message queues, threads, WebAssembly memory) shows in its resident memory, which `rssOf`
 * reads from outside, where a transform cannot change what is read: the watchdog ends the process
 * once it has grown by more than `maxMemoryMb` since it was ready. Answers come back as JSON lines,
 * read with a bound on their length and checked again here.
 */
export function startTransformWorker(options: {
  transformsDir: string;
  maxMemoryMb: number;
  /** Node flags confining the process (transform-permissions.ts). @default [] */
  permissionFlags?: readonly string[];
  /** The process's whole environment: it inherits none of the gateway's. @default {} */
  env?: Readonly<Record<string, string>>;
  /** Resident memory of a process by pid, or `undefined` when it cannot be read. */
  rssOf: (pid: number) => number | undefined;
  /** Called once when the process is gone, whatever the reason. */
  onGone: (worker: TransformWorker) => void;
}): TransformWorker {
  const capBytes = options.maxMemoryMb * MB;
  const child = spawn(
    process.execPath,
    [
      ...(options.permissionFlags ?? []),
      `--max-old-space-size=${options.maxMemoryMb}`,
      `--max-semi-space-size=${Math.max(1, Math.min(8, Math.floor(options.maxMemoryMb / 16)))}`,
      fileURLToPath(TRANSFORM_WORKER_URL),
      options.transformsDir,
    ],
    {
      // Every model key and bot token of the gateway's is in its environment: none of it goes.
      env: { ...options.env },
      // Its own output stays the gateway's; descriptors 3 and 4 carry calls and answers. No IPC
      // channel: nothing but answers, read line by line with a bound, comes back from it.
      stdio: ['ignore', 'inherit', 'inherit', 'pipe', 'pipe'],
    },
  );
  child.unref();
  const calls = child.stdio[3] as Writable & { unref?: () => void };
  const answers = child.stdio[4] as Readable & { unref?: () => void };
  calls.unref?.();
  answers.unref?.();
  // A write to a process that just ended fails: its calls fail through `exit`.
  calls.on('error', () => undefined);
  const pending = new Map<number, Pending>();
  let nextId = 1;
  let alive = true;
  /** Resident memory once the process was ready to take calls: what it holds beyond this is its transforms'. */
  let readyRss: number | undefined;
  let ready = false;
  /** Whether the TypeScript loader's memory was added to the floor (once). */
  let loaderAllowed = false;
  let exited: Promise<void> | undefined;
  const exit = new Promise<void>((resolve) => child.once('exit', () => resolve()));

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

  const onMessage = (message: WorkerMessage): void => {
    if (message.kind === 'ready') {
      // The process says it once, before it reads any call; again, it is a transform resetting the
      // floor its growth is measured from.
      if (ready) {
        void handle.end(
          "transform process ended: it said it was ready again (a transform writing on the answers' descriptor)",
        );
        return;
      }
      ready = true;
      readyRss = child.pid === undefined ? undefined : options.rssOf(child.pid);
      return;
    }
    if (message.kind === 'loader') {
      if (!loaderAllowed && readyRss !== undefined) readyRss += TS_LOADER_BYTES;
      loaderAllowed = true;
      return;
    }
    const p = pending.get(message.id);
    if (p === undefined) {
      void handle.end('transform process ended: it answered a call it was not given');
      return;
    }
    pending.delete(message.id);
    clearTimeout(p.timer);
    if (!message.ok) {
      p.reject(new TransformError(message.message, message.cause === undefined ? undefined : { cause: message.cause }));
      return;
    }
    // The process checked already; a transform could have written on the answers' descriptor itself.
    const refused = checkTransformResult(message.result, p.maxResultBytes);
    if (refused === null) p.resolve(message.result);
    else p.reject(new TransformError(refused));
  };
  /** The longest answer line accepted now: the largest result a call in flight may return, and its envelope. */
  const maxLine = (): number => {
    let most = 0;
    for (const p of pending.values()) most = Math.max(most, p.maxResultBytes);
    return most + ANSWER_ENVELOPE_BYTES;
  };
  readLines(
    answers,
    maxLine,
    (line) => {
      if (!alive) return;
      let message: WorkerMessage;
      try {
        message = JSON.parse(line) as WorkerMessage;
      } catch {
        void handle.end('transform process ended: it wrote something other than an answer');
        return;
      }
      onMessage(message);
    },
    (bytes) => {
      void handle.end(
        `transform process ended: it sent ${Math.round(bytes / 1024)} KB in one answer, more than its calls may return (hooks.maxBodyBytes)`,
      );
    },
  );

  child.once('exit', (code, signal) => {
    // V8 aborts a process whose heap reached its limit.
    gone(
      signal === 'SIGABRT' || code === 134
        ? `transform process ended: its heap passed its ${options.maxMemoryMb} MB cap (transform.maxMemoryMb)`
        : `transform process exited (${signal === null ? `code ${code}` : signal})`,
    );
  });
  child.once('error', (error) => gone(`transform process failed: ${error.message}`));

  /** The input of the `forEach` items this process keeps, by identity of its parts (see `TransformCall`). */
  let kept: (SharedInput & { ref: number }) | undefined;
  let nextRef = 1;
  const encodeCall = (id: number, spec: TransformSpec, input: TransformInput | null): TransformCall => {
    const common = { id, file: spec.file, exportName: spec.exportName };
    if (input === null) return { ...common, probe: true };
    const { maxResultBytes } = spec;
    if (input.item === undefined) return { ...common, input, maxResultBytes };
    if (kept !== undefined && sameShared(kept, input))
      return { ...common, shared: kept.ref, item: input.item, maxResultBytes };
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
      if (!alive) return Promise.reject(new TransformError('transform process has ended'));
      const id = nextId++;
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          pending.delete(id);
          reject(new TransformError(`transform timed out after ${spec.timeoutMs} ms: ${spec.file}`));
          // It may be stuck in a synchronous loop or a system call: ending the process is the only way to stop it.
          void handle.end('transform process restarted after another call to it timed out');
        }, spec.timeoutMs);
        // A probe answers with a problem's text at most.
        pending.set(id, {
          resolve,
          reject,
          timer,
          maxResultBytes: input === null ? ANSWER_ENVELOPE_BYTES : spec.maxResultBytes,
        });
        calls.write(`${JSON.stringify(encodeCall(id, spec, input))}\n`);
      });
    },
    checkMemory() {
      if (!alive || readyRss === undefined || child.pid === undefined) return;
      const rss = options.rssOf(child.pid);
      if (rss === undefined) return;
      const grown = rss - readyRss;
      if (grown > capBytes) {
        void handle.end(
          `transform process ended: it grew by ${Math.round(grown / MB)} MB, over its ${options.maxMemoryMb} MB cap (transform.maxMemoryMb)`,
        );
      }
    },
    end(reason) {
      gone(reason);
      exited ??= (async () => {
        // Held until it is seen to exit (or the wait is over), so whoever awaits this is not left behind.
        child.ref();
        child.kill('SIGKILL');
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([
          exit,
          new Promise<void>((resolve) => {
            timer = setTimeout(resolve, EXIT_WAIT_MS);
          }),
        ]);
        clearTimeout(timer);
        child.unref();
      })();
      return exited;
    },
  };
  return handle;
}

/** Whether `input` shares `kept`'s payload and headers (the same objects) and its url and path. */
function sameShared(kept: SharedInput, input: TransformInput): boolean {
  return (
    kept.payload === input.payload &&
    kept.headers === input.headers &&
    kept.url === input.url &&
    kept.path === input.path
  );
}
