/** What a transform call carries to the worker (plain data: it crosses a thread). */
export interface TransformInput {
  payload: Record<string, unknown>;
  /** Request headers, lower-case names, credentials removed. */
  headers: Record<string, string>;
  /** The request URL path and query (the `token` parameter is never here: such requests are refused). */
  url: string;
  /** The `<name>` segment the hook was called at. */
  path: string;
}

/** What the transform function receives: the input, with `url` as a `URL` (as OpenClaw passes it). */
export type TransformContext = Omit<TransformInput, 'url'> & { url: URL };

/** A transform failed to load, threw, returned something unusable, or timed out. */
export class TransformError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'TransformError';
  }
}

export interface TransformSpec {
  file: string;
  exportName: string;
  timeoutMs: number;
}

/** A call to the transform worker; `probe` only loads the module and answers its function exports. */
export type TransformCall =
  | { id: number; probe?: false; file: string; exportName: string; input: TransformInput }
  | { id: number; probe: true; file: string; exportName: string };

/** The worker's answer. */
export type TransformAnswer =
  | { id: number; ok: true; result: unknown }
  /** `cause`: name and message of the error the transform threw (errors do not cross threads whole). */
  | { id: number; ok: false; message: string; cause?: { name: string; message: string } };
