import { existsSync } from 'node:fs';
import type { Store } from '../store/index.js';
import type { CliDeps } from './cli-deps.js';
import { loadOrReport } from './load-or-report.js';

/**
 * Opens the configured store read-only for an offline command. `'failed'` when the config is
 * invalid (already reported), `'empty'` when the SQLite file does not exist yet.
 */
export function openStoreOrReport(configPath: string, deps: CliDeps): Store | 'failed' | 'empty' {
  const loaded = loadOrReport(configPath, deps);
  if (loaded === null) return 'failed';
  const store = loaded.config.store;
  if (store.driver === 'sqlite' && !existsSync(store.path)) return 'empty';
  return deps.openStore(loaded, { readonly: true });
}
