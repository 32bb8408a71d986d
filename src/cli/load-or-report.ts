import { ConfigError, formatIssues } from '../common/errors.js';
import { readConfig, type LoadedConfig } from '../config/index.js';
import type { CliDeps } from './cli-deps.js';

/**
 * Reads the config; on failure prints every issue with its dot-path and returns `null`. `readOnly`
 * (a command that only reads the store): credentials outside `store` may name unset variables.
 */
export function loadOrReport(path: string, deps: CliDeps, options: { readOnly?: boolean } = {}): LoadedConfig | null {
  try {
    return readConfig(path, deps.env, options);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    deps.stderr(`hookgate: ${error.message}\n${formatIssues(error.issues)}\n`);
    return null;
  }
}
