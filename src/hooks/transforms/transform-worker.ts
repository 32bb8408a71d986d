/**
 * The transform process: loads and calls transforms in a process of its own, so a transform that
 * loops forever, calls `process.exit`, exhausts file descriptors or libuv's thread pool, blocks in
 * a system call or grows without bound ends or stalls only this process, never the gateway. The
 * gateway's side (start-transform-worker.ts) caps its heap by V8's flag and its resident memory
 * from outside. Calls arrive as JSON lines on descriptor 3 and answers leave on descriptor 4
 * (standard input and output stay the transform's own); the process-wide calls that reach other
 * processes are taken away before any transform loads.
 */
import { Socket } from 'node:net';
import { callTransform, probeTransform, TS } from './call-transform.js';
import { checkTransformResult } from './check-transform-result.js';
import { guardWorkerProcess } from './guard-worker-process.js';
import { readLines } from './read-lines.js';
import type { SharedInput, TransformAnswer, TransformCall, TransformInput } from './transform-types.js';

const transformsDir = process.argv[2]!;
/** Ends the process whatever a transform made of `process.exit` (taken before any transform loads). */
const exitProcess = (process as unknown as { reallyExit: (code: number) => never }).reallyExit.bind(process);
// A TypeScript transform's errors name its lines as written (the loader inlines a source map).
process.setSourceMapsEnabled(true);
guardWorkerProcess();

const calls = new Socket({ fd: 3, readable: true, writable: false });
const answers = new Socket({ fd: 4, readable: false, writable: true });
const send = (message: unknown): void => {
  answers.write(`${JSON.stringify(message)}\n`);
};

/** A copy of the input the last call with `keep` carried, its item left out (see `TransformCall`). */
let kept: { ref: number; input: SharedInput } | undefined;

/**
 * The call's input: its own, or a fresh copy of the kept one with the call's item. Each call gets
 * an input of its own: a transform may change what it is given.
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

/**
 * Why a result would not arrive as it was returned (a function, a symbol, a class instance with
 * methods: JSON leaves them out without a word), or `null`. Structured clone refuses what is not
 * data; what it keeps that JSON does not (a Map, a Date) still crosses as JSON turns it.
 */
function notPlainData(result: unknown): string | null {
  try {
    structuredClone(result);
    return null;
  } catch (error) {
    return `transform returned a value that is not plain data: ${(error as Error).message}`;
  }
}

async function answer(call: TransformCall): Promise<TransformAnswer> {
  try {
    if (call.probe === true)
      return {
        kind: 'answer',
        id: call.id,
        ok: true,
        result: await probeTransform(transformsDir, call.file, call.exportName),
      };
    const result = await callTransform(transformsDir, call.file, call.exportName, inputOf(call));
    const refused = checkTransformResult(result, call.maxResultBytes) ?? notPlainData(result);
    return refused === null
      ? { kind: 'answer', id: call.id, ok: true, result }
      : { kind: 'answer', id: call.id, ok: false, message: refused };
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

let loaderAnnounced = false;
readLines(
  calls,
  () => Number.POSITIVE_INFINITY,
  (line) => {
    const call = JSON.parse(line) as TransformCall;
    if (!loaderAnnounced && TS.test(call.file)) {
      loaderAnnounced = true;
      send({ kind: 'loader' });
    }
    void answer(call).then(send);
  },
  () => undefined,
);
// The gateway is gone (or ended this process's calls): nothing is left to answer.
calls.on('close', () => exitProcess(0));
send({ kind: 'ready' });
