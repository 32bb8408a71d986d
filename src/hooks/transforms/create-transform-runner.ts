import { existsSync } from 'node:fs';
import { realpath, stat } from 'node:fs/promises';
import { register } from 'node:module';
import { isInsideDir } from '../../common/is-inside-dir.js';
import { pathToFileURL } from 'node:url';

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

export type TransformRunner = (spec: TransformSpec, input: TransformInput) => Promise<unknown>;

const TS = /\.m?ts$/;
let tsLoaderRegistered = false;

function registerTsLoader(): void {
  if (tsLoaderRegistered) return;
  register(new URL('./ts-loader-hooks.js', import.meta.url));
  tsLoaderRegistered = true;
}

/**
 * Loads and calls transforms. Each call checks the file's modification time and imports a fresh
 * copy when it changed, so an edited transform takes effect without a restart. A `.ts` module
 * loads through the TypeScript loader, unless a `.js` beside it is at least as new. The file must
 * still resolve inside `transformsDir` at load time (a symlink swapped in later is refused).
 */
export function createTransformRunner(transformsDir: string): TransformRunner {
  const loadModule = async (file: string): Promise<Record<string, unknown>> => {
    let real: string;
    try {
      real = await realpath(file);
    } catch (error) {
      throw new TransformError(`transform module not found: ${file}`, { cause: error });
    }
    const root = existsSync(transformsDir) ? await realpath(transformsDir) : transformsDir;
    if (!isInsideDir(root, real)) throw new TransformError(`transform module resolves outside ${transformsDir}: ${file}`);
    let target = real;
    if (TS.test(real)) {
      const js = real.replace(TS, '.js');
      if (existsSync(js) && (await stat(js)).mtimeMs >= (await stat(real)).mtimeMs) target = js;
      else registerTsLoader();
    }
    const { mtimeMs } = await stat(target);
    try {
      return (await import(`${pathToFileURL(target).href}?v=${mtimeMs}`)) as Record<string, unknown>;
    } catch (error) {
      throw new TransformError(`transform module failed to load: ${file}: ${(error as Error).message}`, { cause: error });
    }
  };

  return async (spec, input) => {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new TransformError(`transform timed out after ${spec.timeoutMs} ms: ${spec.file}`)), spec.timeoutMs);
    });
    try {
      const mod = await Promise.race([loadModule(spec.file), timeout]);
      const fn = mod[spec.exportName];
      if (typeof fn !== 'function') throw new TransformError(`transform export "${spec.exportName}" is not a function: ${spec.file}`);
      let result: unknown;
      try {
        result = await Promise.race([Promise.resolve((fn as (input: TransformInput) => unknown)(input)), timeout]);
      } catch (error) {
        if (error instanceof TransformError) throw error;
        throw new TransformError(`transform threw: ${(error as Error)?.message ?? String(error)}`, { cause: error });
      }
      return result;
    } finally {
      clearTimeout(timer);
    }
  };
}
