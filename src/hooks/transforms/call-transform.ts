import { existsSync } from 'node:fs';
import { realpath, stat } from 'node:fs/promises';
import { register } from 'node:module';
import { relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { isInsideDir } from '../../common/is-inside-dir.js';
import { TransformError, type TransformContext, type TransformInput } from './transform-types.js';

/** A TypeScript module's file name: loaded through the TypeScript loader, unless a newer `.js` is beside it. */
export const TS = /\.m?ts$/;

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
/**
 * A stack position: a module URL (with the reload query a transform's own URL carries) or, for a
 * frame mapped through a source map, a path; then line and column.
 */
const POSITION = /((?:file:\/\/)?\/[^\s()?:]+)(?:\?[^\s():]*)?:(\d+)(?::(\d+))?/g;

/**
 * Where in the transforms directory an error was thrown, as `file:line:column` relative to it (the
 * first frame of the stack that is there), or `null`. A TypeScript module's frames are mapped back
 * to the file as written through the source map its loader inlines.
 */
function whereInTransforms(error: unknown, root: string): string | null {
  const stack = typeof error === 'object' && error !== null ? (error as { stack?: unknown }).stack : undefined;
  if (typeof stack !== 'string') return null;
  for (const [, url, line, column] of stack.matchAll(POSITION)) {
    const path = url!.startsWith('file:') ? fileURLToPath(url!) : url!;
    if (!isInsideDir(root, path)) continue;
    return `${relative(root, path)}:${line}${column === undefined ? '' : `:${column}`}`;
  }
  return null;
}

/** `message`, followed by where the error was thrown in the transforms directory when the stack says. */
function withPosition(message: string, error: unknown, root: string): string {
  const where = whereInTransforms(error, root);
  return where === null ? message : `${message} (at ${where})`;
}

let tsLoaderRegistered = false;
/**
 * `module.register` as it was when this module loaded: in a transform process the guard takes it
 * away before any transform loads (guard-worker-process.ts), and only the TypeScript loader may use it.
 */
const registerHooks = register;

function registerTsLoader(): void {
  if (tsLoaderRegistered) return;
  registerHooks(new URL('./ts-loader-hooks.js', import.meta.url));
  tsLoaderRegistered = true;
}

/**
 * Imports a transform module. Each call checks the file's modification time and imports a fresh
 * copy when it changed, so an edited transform takes effect without a restart. A `.ts` module
 * loads through the TypeScript loader, unless a `.js` beside it is at least as new. The file must
 * still resolve inside `transformsDir` at load time (a symlink swapped in later is refused).
 */
async function loadTransformModule(transformsDir: string, file: string): Promise<Record<string, unknown>> {
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
    const message = withPosition(`transform module failed to load: ${file}: ${describeError(error)}`, error, root);
    throw new TransformError(message, { cause: error });
  }
}

/** The export called when none is configured: `default`, else a named `transform` (OpenClaw's habit). */
const DEFAULT_EXPORT = 'default';
const FALLBACK_EXPORT = 'transform';

/** Picks the function to call, or explains why there is none. */
function pickTransformExport(
  mod: Record<string, unknown>,
  exportName: string,
): { fn: (ctx: TransformContext) => unknown } | { problem: string } {
  const fn = mod[exportName];
  if (typeof fn === 'function') return { fn: fn as (ctx: TransformContext) => unknown };
  const fallback = exportName === DEFAULT_EXPORT ? mod[FALLBACK_EXPORT] : undefined;
  if (typeof fallback === 'function') return { fn: fallback as (ctx: TransformContext) => unknown };
  const exported = Object.keys(mod).filter((k) => typeof mod[k] === 'function');
  const has = exported.length === 0 ? 'it exports no function' : `its functions: ${exported.join(', ')}`;
  if (exportName !== DEFAULT_EXPORT || mod[DEFAULT_EXPORT] !== undefined) {
    return { problem: `export "${exportName}" is not a function (${has})` };
  }
  return { problem: `exports neither a default function nor a function named "transform" (${has})` };
}

/** `input.url` as a `URL`, on the request's own host when it names a valid one. */
function toUrl(input: TransformInput): URL {
  try {
    return new URL(input.url, `http://${input.headers['host'] ?? 'localhost'}`);
  } catch {
    return new URL(input.url, 'http://localhost');
  }
}

/** Loads the module and calls its export with the input. */
export async function callTransform(
  transformsDir: string,
  file: string,
  exportName: string,
  input: TransformInput,
): Promise<unknown> {
  const mod = await loadTransformModule(transformsDir, file);
  const picked = pickTransformExport(mod, exportName);
  if ('problem' in picked) throw new TransformError(`transform ${picked.problem}: ${file}`);
  try {
    return await picked.fn({ ...input, url: toUrl(input) });
  } catch (error) {
    const root = existsSync(transformsDir) ? await realpath(transformsDir) : transformsDir;
    throw new TransformError(withPosition(`transform threw: ${describeError(error)}`, error, root), { cause: error });
  }
}

/** Loads the module and names the problem with the export the mapping would call, or `null`. */
export async function probeTransform(transformsDir: string, file: string, exportName: string): Promise<string | null> {
  const picked = pickTransformExport(await loadTransformModule(transformsDir, file), exportName);
  return 'problem' in picked ? picked.problem : null;
}
