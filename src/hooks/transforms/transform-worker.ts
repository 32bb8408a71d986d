/**
 * The transform worker thread: loads and calls transforms off the gateway's event loop, so a
 * transform that loops forever or calls `process.exit` cannot stall or end the gateway. The
 * process-wide calls are taken away before any transform loads; while calls are in flight the
 * worker reports its buffer memory, which its heap limit does not cover.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { callTransform, probeTransform } from './call-transform.js';
import { checkTransformResult } from './check-transform-result.js';
import { guardWorkerProcess } from './guard-worker-process.js';
import type { MemoryReport, SharedInput, TransformAnswer, TransformCall, TransformInput } from './transform-types.js';

/** How often memory is reported while a call runs; the gateway treats silence as a stuck worker. */
const REPORT_MS = 20;

const { transformsDir } = workerData as { transformsDir: string };
const port = parentPort!;
guardWorkerProcess();

let inFlight = 0;
let reporter: NodeJS.Timeout | undefined;
const report = (): void => {
  const message: MemoryReport = { kind: 'memory', externalBytes: process.memoryUsage().external };
  port.postMessage(message);
};

/** A copy of the input the last call with `keep` carried, its item left out (see `TransformCall`). */
let kept: { ref: number; input: SharedInput } | undefined;

/**
 * The call's input: its own, or a fresh copy of the kept one with the call's item. Each call gets
 * an input of its own, as if it had crossed the thread: a transform may change what it is given.
 */
function inputOf(call: Exclude<TransformCall, { probe: true }>): TransformInput {
  if ('input' in call) {
    if (call.keep !== undefined) {
      const { item: _item, ...shared } = call.input;
      kept = { ref: call.keep, input: structuredClone(shared) };
    }
    return call.input;
  }
  if (kept?.ref !== call.shared) throw new Error(`the input this call shares (${call.shared}) is no longer kept`);
  return { ...structuredClone(kept.input), item: call.item };
}

async function answer(call: TransformCall): Promise<TransformAnswer> {
  try {
    if (call.probe === true) return { kind: 'answer', id: call.id, ok: true, result: await probeTransform(transformsDir, call.file, call.exportName) };
    const result = await callTransform(transformsDir, call.file, call.exportName, inputOf(call));
    const refused = checkTransformResult(result, call.maxResultBytes);
    return refused === null ? { kind: 'answer', id: call.id, ok: true, result } : { kind: 'answer', id: call.id, ok: false, message: refused };
  } catch (error) {
    const cause = (error as { cause?: unknown }).cause;
    return {
      kind: 'answer',
      id: call.id,
      ok: false,
      message: (error as Error)?.message ?? String(error),
      ...(cause instanceof Error ? { cause: { name: cause.name, message: cause.message } } : {}),
    };
  }
}

port.on('message', (call: TransformCall) => {
  if (inFlight++ === 0) {
    report();
    reporter = setInterval(report, REPORT_MS);
  }
  void answer(call).then((message) => {
    if (--inFlight === 0) clearInterval(reporter);
    try {
      port.postMessage(message);
    } catch (error) {
      // A result that cannot cross threads (a function, a class instance with methods…).
      port.postMessage({ kind: 'answer', id: call.id, ok: false, message: `transform returned a value that is not plain data: ${(error as Error).message}` });
    }
  });
});
