import { existsSync } from 'node:fs';
import { realpath, stat } from 'node:fs/promises';
import { register } from 'node:module';
import { pathToFileURL } from 'node:url';
import { isInsideDir } from '../../common/is-inside-dir.js';
import { TransformError, type TransformInput } from './transform-types.js';

const TS = /\.m?ts$/;

/** A readable line for anything thrown, including errors that crossed a thread as plain objects. */
function describeError(error: unknown): string {
  if (error instanceof Error) return error.message;
  if (typeof error === 'object' && error !== null) {
    const message = (error as { message?: unknown }).message;
    if (typeof message === 'string') return message;
    try {
      return JSON.stringify(error);
    } catch {
      return Object.prototype.toString.call(error);
    }
  }
  return String(error);
}
let tsLoaderRegistered = false;

function registerTsLoader(): void {
  if (tsLoaderRegistered) return;
  register(new URL('./ts-loader-hooks.js', import.meta.url));
  tsLoaderRegistered = true;
}

/**
 * Imports a transform module. Each call checks the file's modification time and imports a fresh
 * copy when it changed, so an edited transform takes effect without a restart. A `.ts` module
 * loads through the TypeScript loader, unless a `.js` beside it is at least as new. The file must
 * still resolve inside `transformsDir` at load time (a symlink swapped in later is refused).
 */
export async function loadTransformModule(transformsDir: string, file: string): Promise<Record<string, unknown>> {
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
    throw new TransformError(`transform module failed to load: ${file}: ${describeError(error)}`, { cause: error });
  }
}

/** Loads the module and calls its export with the input. */
export async function callTransform(transformsDir: string, file: string, exportName: string, input: TransformInput): Promise<unknown> {
  const mod = await loadTransformModule(transformsDir, file);
  const fn = mod[exportName];
  if (typeof fn !== 'function') throw new TransformError(`transform export "${exportName}" is not a function: ${file}`);
  try {
    return await (fn as (input: TransformInput) => unknown)(input);
  } catch (error) {
    throw new TransformError(`transform threw: ${describeError(error)}`, { cause: error });
  }
}
