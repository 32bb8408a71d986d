import { ConfigError } from '../common/errors.js';
import type { Log } from '../common/log.js';
import { readConfig, type Env, type LoadedConfig } from '../config/index.js';
import type { RunningGateway } from './cli-deps.js';

interface ReloaderDeps {
  path: string;
  env: Env;
  log: Log;
  gateway: Pick<RunningGateway, 'reload'>;
  /** The machine checks `check` runs (bind, transforms). */
  preflight: (loaded: LoadedConfig) => Promise<{ path: string; message: string }[]>;
  /** Applies the command line's overrides (`--port`, `--bind`) to every config read. */
  override: (loaded: LoadedConfig) => LoadedConfig;
}

/**
 * Reloads the config file into the running gateway: read, validate and preflight it exactly like
 * `hookgate check`; a config that fails is refused and logged, and the running one stays.
 * Reloads never overlap: one asked for while another runs starts after it.
 */
export function createReloader(deps: ReloaderDeps): (reason: string) => Promise<boolean> {
  const once = async (reason: string): Promise<boolean> => {
    let next: LoadedConfig;
    try {
      next = deps.override(readConfig(deps.path, deps.env));
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      deps.log.error('config reload refused; the running config stays', {
        reason,
        path: deps.path,
        issues: error.issues,
      });
      return false;
    }
    const issues = await deps.preflight(next);
    if (issues.length > 0) {
      deps.log.error('config reload refused; the running config stays', { reason, path: deps.path, issues });
      return false;
    }
    for (const w of next.warnings) deps.log.warn('config warning', { path: w.path, warning: w.message });
    const restart = deps.gateway.reload(next);
    deps.log.info('config reloaded', { reason, path: deps.path });
    if (restart.length > 0) deps.log.warn('config changes that take effect only after a restart', { keys: restart });
    return true;
  };

  let tail: Promise<unknown> = Promise.resolve();
  return (reason) => {
    const next = tail.then(() => once(reason));
    tail = next.catch(() => undefined);
    return next;
  };
}
