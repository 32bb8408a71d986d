import { StoreMissingError, type Store } from '../store/index.js';
import type { CliDeps } from './cli-deps.js';
import { loadOrReport } from './load-or-report.js';

/**
 * Opens the configured store for an offline command beside (or without) a running gateway.
 * `'failed'` when the config is invalid or the store cannot be opened (already reported),
 * `'empty'` when no gateway has created it yet.
 */
export async function openStoreOrReport(
  configPath: string,
  deps: CliDeps,
  mode: 'read' | 'write' = 'read',
): Promise<Store | 'failed' | 'empty'> {
  const loaded = loadOrReport(configPath, deps, { readOnly: mode === 'read' });
  if (loaded === null) return 'failed';
  try {
    return await deps.openStore(loaded, { mode });
  } catch (error) {
    if (error instanceof StoreMissingError) return 'empty';
    deps.stderr(`hookgate: ${(error as Error).message}\n`);
    return 'failed';
  }
}
