/**
 * Run in a transform process before any transform loads: takes away the calls through which code
 * there reaches other processes, the gateway's among them. `process.exit`, a crash or WASI's
 * `proc_exit` end only the transform process; but `process.kill(process.ppid, …)` signals the
 * gateway, `child_process` can run `kill`, `process.binding('spawn_sync')` and native addons bypass
 * both, a nested `Worker` would get a fresh `process`, `process._debugProcess` opens another
 * process's inspector, `os.setPriority` renices any process of the user, and `module.register`
 * runs code in the module loader's own thread, which this guard never reaches. This is a guard
 * against a transform taking the gateway down, not a sandbox: a transform is code the operator
 * installed, confined to the transforms directory.
 */
import { syncBuiltinESMExports } from 'node:module';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/** Built-in modules whose functions (and classes) are replaced by ones that throw. */
const BLOCKED_MODULES = ['child_process', 'cluster', 'inspector', 'inspector/promises'] as const;
/** Single exports replaced in otherwise allowed modules. */
const BLOCKED_EXPORTS: ReadonlyArray<readonly [string, string]> = [
  ['worker_threads', 'Worker'],
  ['v8', 'setFlagsFromString'],
  ['os', 'setPriority'],
  ['module', 'register'],
];
/** `process` methods that reach beyond the transform process (other processes, the gateway's among them). */
const BLOCKED_PROCESS = [
  'kill',
  '_kill',
  'abort',
  'binding',
  '_linkedBinding',
  'dlopen',
  '_debugProcess',
  '_debugEnd',
] as const;

function refusal(name: string): () => never {
  return function refused(): never {
    throw new Error(`${name} is not available to hook transforms`);
  };
}

/** Replaces the blocked calls; idempotent. Frozen in place, so a transform cannot put them back. */
export function guardWorkerProcess(): void {
  for (const name of BLOCKED_MODULES) {
    let mod: Record<string, unknown>;
    try {
      mod = require(`node:${name}`) as Record<string, unknown>;
    } catch {
      continue; // not in this Node version
    }
    for (const key of Object.keys(mod)) {
      if (typeof mod[key] === 'function') mod[key] = refusal(`${name}.${key}`);
    }
  }
  for (const [name, key] of BLOCKED_EXPORTS) {
    (require(`node:${name}`) as Record<string, unknown>)[key] = refusal(`${name}.${key}`);
  }
  // `import { exec } from 'node:child_process'` reads these live bindings: update them.
  syncBuiltinESMExports();
  for (const key of BLOCKED_PROCESS) {
    Object.defineProperty(process, key, {
      value: refusal(`process.${key}`),
      writable: false,
      configurable: false,
      enumerable: false,
    });
  }
}
