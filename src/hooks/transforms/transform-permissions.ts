/**
 * Node's permission model for transform processes: reads only where the transforms and the code
 * that loads them are, no writes, no child processes, no workers, no native addons, no WASI. The
 * guard in the process (guard-worker-process.ts) keeps a transform from reaching the gateway; this
 * keeps it from reading the config file, the database, or anything else of the machine's.
 */
import { existsSync, realpathSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** What a Node version offers: the flags it takes, and its version. */
interface NodeFeatures {
  flags: ReadonlySet<string>;
  version: string;
}

const RUNNING: NodeFeatures = { flags: process.allowedNodeEnvironmentFlags, version: process.versions.node };

/**
 * The flag that turns the permission model on, or `null` where this Node has none that takes a
 * list of paths: `--permission` from Node 22.13 and 23.5, `--experimental-permission` from 20.8
 * (earlier, `--allow-fs-read` took one comma-separated list, which a path with a comma breaks).
 */
export function permissionFlag(node: NodeFeatures = RUNNING): string | null {
  if (node.flags.has('--permission')) return '--permission';
  const [major = 0, minor = 0] = node.version.split('.').map(Number);
  if (node.flags.has('--experimental-permission') && (major > 20 || (major === 20 && minor >= 8)))
    return '--experimental-permission';
  return null;
}

/** The directory of an installed package, found from the file it resolves to. */
function packageDir(name: string): string | null {
  try {
    const entry = createRequire(import.meta.url).resolve(name);
    const marker = join('node_modules', name);
    const at = entry.lastIndexOf(marker);
    return at === -1 ? null : entry.slice(0, at + marker.length);
  } catch {
    return null;
  }
}

/**
 * A path and, when it differs, where it really is (modules load from their real paths), without a
 * trailing separator: Node 20's permission tree asserts (and the process aborts) when it is given a
 * directory both with and without one.
 */
function bothPaths(path: string): string[] {
  if (!existsSync(path)) return [];
  const given = path.length > 1 ? path.replace(/[/\\]+$/, '') : path;
  const real = realpathSync(given);
  return real === given ? [given] : [given, real];
}

/**
 * What a transform process may read: the transforms directory (with the packages installed in it,
 * `node_modules` there), the transform process's own code (the worker's directory, and the shared
 * modules beside it when it runs from the compiled tree rather than the bundle), and the TypeScript
 * compiler the loader uses.
 */
export function transformReadPaths(transformsDir: string, workerUrl: URL): string[] {
  const paths = [
    ...bothPaths(transformsDir),
    ...bothPaths(fileURLToPath(new URL('.', workerUrl))),
    ...bothPaths(fileURLToPath(new URL('../../common/', workerUrl))),
  ];
  const amaro = packageDir('amaro');
  if (amaro !== null) paths.push(...bothPaths(amaro));
  return [...new Set(paths)];
}

/**
 * Node flags that confine a transform process, or `[]` where the permission model is missing (the
 * process then runs with the gateway's rights, its environment still its own). Its experimental
 * warning is silenced where Node lets one be: every process would print it to the gateway's stderr.
 */
export function transformPermissionFlags(readPaths: readonly string[], node: NodeFeatures = RUNNING): string[] {
  const flag = permissionFlag(node);
  if (flag === null) return [];
  return [
    flag,
    ...readPaths.map((p) => `--allow-fs-read=${p}`),
    ...(node.flags.has('--disable-warning') ? ['--disable-warning=ExperimentalWarning'] : []),
  ];
}
