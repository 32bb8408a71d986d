import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The hook token every test config uses unless it says otherwise. */
export const HOOK_TOKEN = 'test-hook-token-6f1c2a9e';
/** The gateway's own token; must differ from the hook token. */
export const GATEWAY_TOKEN = 'test-gateway-token-b37d04c1';

/** A JSON config document, as written to disk. */
export type ConfigDoc = Record<string, unknown>;

/** A temporary directory holding one config file. */
export interface TempConfig {
  /** The directory (also the config's directory: relative paths resolve against it). */
  dir: string;
  /** Absolute path of the config file. */
  path: string;
  /** Absolute path of the SQLite file when the config keeps the default store path. */
  storePath: string;
  /** Removes the directory and everything in it. */
  cleanup(): void;
}

/** Creates an empty temporary directory; the caller removes it. */
export function createTempDir(prefix = 'hookgate-e2e-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/**
 * A small valid config: hooks enabled with `HOOK_TOKEN`, quiet logs, SQLite under the config dir.
 * `overrides` are merged one level deep per section (`{hooks: {path: '/x'}}` keeps the token).
 */
export function baseConfig(overrides: { [section: string]: unknown } = {}): ConfigDoc {
  const base: ConfigDoc = {
    gateway: { bind: '127.0.0.1', port: 0, auth: { token: GATEWAY_TOKEN }, logLevel: 'warn' },
    hooks: { enabled: true, token: HOOK_TOKEN },
    agents: { list: [{ id: 'main', default: true }] },
    store: { driver: 'sqlite', path: 'state/hookgate.db' },
  };
  for (const [section, value] of Object.entries(overrides)) {
    const current = base[section];
    if (isPlainObject(current) && isPlainObject(value)) base[section] = { ...current, ...value };
    else base[section] = value;
  }
  return base;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/**
 * Writes `config` (an object, written as JSON, or raw text written as is) to `hookgate.json` in a
 * fresh temporary directory.
 */
export function createTempConfig(config: ConfigDoc | string, options: { dir?: string } = {}): TempConfig {
  const dir = options.dir ?? createTempDir();
  const path = join(dir, 'hookgate.json');
  writeFileSync(path, typeof config === 'string' ? config : JSON.stringify(config, null, 2));
  return {
    dir,
    path,
    storePath: join(dir, 'state', 'hookgate.db'),
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}
