/** What a transform call carries to the transform process (plain data: it crosses as JSON). */
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
  /** Which process runs it: one per mapping, so one slow or broken mapping never stalls another. */
  key: string;
  file: string;
  exportName: string;
  timeoutMs: number;
  /** Memory cap of the process (heap by V8's limit, all the rest through the watchdog). */
  maxMemoryMb: number;
  /** Largest result, as JSON, accepted back (`hooks.maxBodyBytes`). */
  maxResultBytes: number;
  /** The process's whole environment (`transform.env`). @default {} */
  env?: Readonly<Record<string, string>>;
}

/** What the items of one `forEach` request share: everything of the input but the item. */
export type SharedInput = Omit<TransformInput, 'item'>;

/**
 * A call to the transform process; `probe` only loads the module and answers its function exports.
 * A call carries its input whole (a `forEach` item's call asks the process to keep a copy under
 * `keep`), or names the input kept last (`shared`) and carries only its item: the items of one
 * `forEach` request send their payload once, not once each.
 */
export type TransformCall =
  | {
      id: number;
      probe?: false;
      file: string;
      exportName: string;
      input: TransformInput;
      keep?: number;
      maxResultBytes: number;
    }
  | {
      id: number;
      probe?: false;
      file: string;
      exportName: string;
      shared: number;
      item: unknown;
      maxResultBytes: number;
    }
  | { id: number; probe: true; file: string; exportName: string };

/** The transform process's answer to one call. */
export type TransformAnswer =
  | { kind: 'answer'; id: number; ok: true; result: unknown }
  /** `cause`: name and message of the error the transform threw (errors do not cross processes whole). */
  | { kind: 'answer'; id: number; ok: false; message: string; cause?: { name: string; message: string } };

/** Sent once by a transform process when it is ready to take calls (its resident memory then is its floor). */
interface ReadyMessage {
  kind: 'ready';
}

/** Sent once, before the first TypeScript module loads: the TypeScript loader's own memory is not the transform's. */
interface LoaderMessage {
  kind: 'loader';
}

export type WorkerMessage = TransformAnswer | ReadyMessage | LoaderMessage;
