import type { Config } from './schema.js';

/**
 * Settings read once at startup: a reload cannot apply them. The listener, the store, the
 * runtime (agents, models) and the auth limiter's window are built once; hooks, mappings, tokens
 * and channels are rebuilt on every reload.
 */
export const RESTART_ONLY_KEYS = [
  'gateway', 'store', 'agents', 'models', 'hooks.authRateLimit', 'hooks.transformsDir',
] as const;

function pick(config: Config, key: (typeof RESTART_ONLY_KEYS)[number]): unknown {
  switch (key) {
    case 'hooks.authRateLimit':
      return config.hooks.authRateLimit;
    case 'hooks.transformsDir':
      return config.hooks.transformsDir;
    default:
      return config[key];
  }
}

/** The restart-only keys whose value differs between two configs. */
export function restartOnlyChanges(before: Config, after: Config): string[] {
  return RESTART_ONLY_KEYS.filter((key) => JSON.stringify(pick(before, key)) !== JSON.stringify(pick(after, key)));
}
