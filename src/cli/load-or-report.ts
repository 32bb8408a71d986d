import { ConfigError, formatIssues } from '../common/errors.js';
import { readConfig, type LoadedConfig } from '../config/index.js';
import type { CliDeps } from './cli-deps.js';

/** Reads the config; on failure prints every issue with its dot-path and returns `null`. */
export function loadOrReport(path: string, deps: CliDeps): LoadedConfig | null {
  try {
    return readConfig(path, deps.env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    deps.stderr(`hookgate: ${error.message}\n${formatIssues(error.issues)}\n`);
    return null;
  }
}
