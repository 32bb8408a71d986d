/**
 * The transform worker thread: loads and calls transforms off the gateway's event loop, so a
 * transform that loops forever or calls `process.exit` cannot stall or end the gateway.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { callTransform, probeTransform } from './call-transform.js';
import type { TransformAnswer, TransformCall } from './transform-types.js';

const { transformsDir } = workerData as { transformsDir: string };
const port = parentPort!;

port.on('message', (call: TransformCall) => {
  void (async () => {
    let answer: TransformAnswer;
    try {
      const result = call.probe === true
        ? await probeTransform(transformsDir, call.file, call.exportName)
        : await callTransform(transformsDir, call.file, call.exportName, call.input);
      answer = { id: call.id, ok: true, result };
    } catch (error) {
      const cause = (error as { cause?: unknown }).cause;
      answer = {
        id: call.id,
        ok: false,
        message: (error as Error)?.message ?? String(error),
        ...(cause instanceof Error ? { cause: { name: cause.name, message: cause.message } } : {}),
      };
    }
    try {
      port.postMessage(answer);
    } catch (error) {
      // A result that cannot cross threads (a function, a class instance with methods…).
      port.postMessage({ id: call.id, ok: false, message: `transform returned a value that is not plain data: ${(error as Error).message}` });
    }
  })();
});
