import { Worker } from 'node:worker_threads';
import { TransformError, type TransformAnswer, type TransformInput, type TransformSpec } from './transform-types.js';

export { TransformError } from './transform-types.js';
export type { TransformInput, TransformSpec } from './transform-types.js';

/** Calls a transform and resolves with what it returned. */
export type TransformRunner = (spec: TransformSpec, input: TransformInput) => Promise<unknown>;

/**
 * A runner backed by a worker thread, which `close()` ends. Call it before the process should
 * exit: once the worker registered the TypeScript loader, its loader thread keeps the process
 * alive even though the worker itself is unref'd.
 */
export type WorkerTransformRunner = TransformRunner & {
  /** Loads the module without calling it: the problem with the export `spec` names, or `null`. */
  probe(spec: TransformSpec): Promise<string | null>;
  close(): Promise<void>;
};

interface Pending {
  /** The worker the call went to: only its failure fails the call. */
  worker: Worker;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
  timer: NodeJS.Timeout;
}

/**
 * Runs transforms in a worker thread, started on the first call. A call that does not settle
 * within its `timeoutMs` fails, and the worker is replaced: that is the only way to stop a
 * transform stuck in a synchronous loop. Calls in flight on the replaced worker fail with it.
 */
export function createTransformRunner(transformsDir: string): WorkerTransformRunner {
  let worker: Worker | undefined;
  let nextId = 1;
  const pending = new Map<number, Pending>();

  const failAll = (w: Worker, reason: string): void => {
    if (worker === w) worker = undefined;
    for (const [id, p] of pending) {
      if (p.worker !== w) continue;
      clearTimeout(p.timer);
      p.reject(new TransformError(reason));
      pending.delete(id);
    }
  };

  const start = (): Worker => {
    const w = new Worker(new URL('./transform-worker.js', import.meta.url), { workerData: { transformsDir } });
    w.unref();
    w.on('message', (answer: TransformAnswer) => {
      const p = pending.get(answer.id);
      if (p === undefined) return;
      pending.delete(answer.id);
      clearTimeout(p.timer);
      if (answer.ok) p.resolve(answer.result);
      else p.reject(new TransformError(answer.message, answer.cause === undefined ? undefined : { cause: answer.cause }));
    });
    w.on('error', (error) => failAll(w, `transform worker failed: ${error.message}`));
    w.on('exit', (code) => failAll(w, `transform worker exited (code ${code})`));
    return w;
  };

  const send = (spec: TransformSpec, input: TransformInput | null): Promise<unknown> => {
    worker ??= start();
    const w = worker;
    const id = nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        pending.delete(id);
        reject(new TransformError(`transform timed out after ${spec.timeoutMs} ms: ${spec.file}`));
        // The worker may be stuck in a loop: replace it.
        failAll(w, 'transform worker restarted after another transform timed out');
        void w.terminate();
      }, spec.timeoutMs);
      pending.set(id, { worker: w, resolve, reject, timer });
      w.postMessage(input === null
        ? { id, probe: true, file: spec.file, exportName: spec.exportName }
        : { id, file: spec.file, exportName: spec.exportName, input });
    });
  };
  const run = ((spec: TransformSpec, input: TransformInput): Promise<unknown> => send(spec, input)) as WorkerTransformRunner;
  run.probe = async (spec) => (await send(spec, null)) as string | null;
  run.close = async () => {
    const w = worker;
    worker = undefined;
    if (w !== undefined) await w.terminate();
  };
  return run;
}
