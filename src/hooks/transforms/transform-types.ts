/** What a transform call carries to the worker (plain data: it crosses a thread). */
export interface TransformInput {
  payload: Record<string, unknown>;
  /** Request headers, lower-case names, credentials removed. */
  headers: Record<string, string>;
  /** The request URL path and query (the `token` parameter is never here: such requests are refused). */
  url: string;
  /** The `<name>` segment the hook was called at. */
  path: string;
  /** With `forEach`, the array item this call builds the action for. */
  item?: unknown;
}

/** What the transform function receives: the input, with `url` as a `URL` (as OpenClaw passes it). */
export type TransformContext = Omit<TransformInput, 'url'> & { url: URL };

/** A transform failed to load, threw, returned something unusable, timed out or broke its bounds. */
export class TransformError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'TransformError';
  }
}

export interface TransformSpec {
  /** Which worker runs it: one per mapping, so one slow or broken mapping never stalls another. */
  key: string;
  file: string;
  exportName: string;
  timeoutMs: number;
  /** Memory cap of the worker (heap, and buffers through the watchdog). */
  maxMemoryMb: number;
  /** Largest result, as JSON, accepted back (`hooks.maxBodyBytes`). */
  maxResultBytes: number;
}

/** What the items of one `forEach` request share: everything of the input but the item. */
export type SharedInput = Omit<TransformInput, 'item'>;

/**
 * A call to the transform worker; `probe` only loads the module and answers its function exports.
 * A call carries its input whole (a `forEach` item's call asks the worker to keep a copy under
 * `keep`), or names the input kept last (`shared`) and carries only its item: the items of one
 * `forEach` request send their payload once, not once each.
 */
export type TransformCall =
  | { id: number; probe?: false; file: string; exportName: string; input: TransformInput; keep?: number; maxResultBytes: number }
  | { id: number; probe?: false; file: string; exportName: string; shared: number; item: unknown; maxResultBytes: number }
  | { id: number; probe: true; file: string; exportName: string };

/** The worker's answer to one call. */
export type TransformAnswer =
  | { kind: 'answer'; id: number; ok: true; result: unknown }
  /** `cause`: name and message of the error the transform threw (errors do not cross threads whole). */
  | { kind: 'answer'; id: number; ok: false; message: string; cause?: { name: string; message: string } };

/** Sent by a worker every few tenths of a second while it has calls in flight. */
export interface MemoryReport {
  kind: 'memory';
  /** Memory outside the JS heap held by the worker's isolate: buffers and array buffers. */
  externalBytes: number;
}

export type WorkerMessage = TransformAnswer | MemoryReport;
