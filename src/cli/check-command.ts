import { EXIT_FAILURE, EXIT_OK, type CliDeps } from './cli-deps.js';
import { loadOrReport } from './load-or-report.js';

/** `hookgate check`: validates the config and prints every issue. */
export function checkCommand(configPath: string, deps: CliDeps): number {
  const loaded = loadOrReport(configPath, deps);
  if (loaded === null) return EXIT_FAILURE;
  const { hooks, store } = loaded.config;
  deps.stdout(
    `ok: ${configPath}\n` +
      `  hooks: ${hooks.enabled ? `enabled at ${hooks.path}` : 'disabled'}\n` +
      `  store: ${store.driver}${store.driver === 'sqlite' ? ` (${store.path})` : ''}\n`,
  );
  return EXIT_OK;
}
