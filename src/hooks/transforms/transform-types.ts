/** What a transform is called with. */
export interface TransformInput {
  payload: Record<string, unknown>;
  /** Request headers, lower-case names, credentials removed. */
  headers: Record<string, string>;
  /** The request URL path and query (the `token` parameter is never here: such requests are refused). */
  url: string;
  /** The `<name>` segment the hook was called at. */
  path: string;
}

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

/** A call to the transform worker. */
export interface TransformCall {
  id: number;
  file: string;
  exportName: string;
  input: TransformInput;
}

/** The worker's answer. */
export type TransformAnswer =
  | { id: number; ok: true; result: unknown }
  /** `cause`: name and message of the error the transform threw (errors do not cross threads whole). */
  | { id: number; ok: false; message: string; cause?: { name: string; message: string } };
