import { formatIssues } from '../common/errors.js';
import { EXIT_FAILURE, EXIT_OK, type CliDeps } from './cli-deps.js';
import { loadOrReport } from './load-or-report.js';
import { preflightConfig } from './preflight-config.js';

/** `hookgate check`: validates the config as `serve` would, loads the transforms, prints every issue. */
export async function checkCommand(configPath: string, deps: CliDeps): Promise<number> {
  const loaded = loadOrReport(configPath, deps);
  if (loaded === null) return EXIT_FAILURE;
  const issues = await preflightConfig(loaded);
  if (issues.length > 0) {
    deps.stderr(`hookgate: Invalid configuration in ${configPath}\n${formatIssues(issues)}\n`);
    return EXIT_FAILURE;
  }
  const { hooks, store } = loaded.config;
  for (const w of loaded.warnings) deps.stderr(`hookgate: warning: ${w.path}: ${w.message}\n`);
  deps.stdout(
    `ok: ${configPath}\n` +
      `  hooks: ${hooks.enabled ? `enabled at ${hooks.path}` : 'disabled'}` +
      `, ${hooks.mappings.length} mapping${hooks.mappings.length === 1 ? '' : 's'}, presets: ${hooks.presets.join(', ') || 'none'}\n` +
      `  store: ${store.driver}${store.driver === 'sqlite' ? ` (${store.path})` : ''}\n`,
  );
  return EXIT_OK;
}
