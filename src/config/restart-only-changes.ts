import type { Config } from './schema.js';

/**
 * Settings read once at startup: a reload cannot apply them. The listener, the store, the
 * runtime (agents, models), the MCP endpoint, the relay and the pull loop and the auth limiter's window are built once; hooks, mappings, tokens,
 * channels and run budgets are rebuilt on every reload.
 */
const RESTART_ONLY_KEYS = [
  'gateway',
  'store',
  'agents',
  'hooks.authRateLimit',
  'hooks.transformsDir',
  'hooks.maxTransformProcesses',
  'mcp',
  'relay',
  'pull',
] as const;

function pick(config: Config, key: (typeof RESTART_ONLY_KEYS)[number]): unknown {
  switch (key) {
    case 'hooks.authRateLimit':
      return config.hooks.authRateLimit;
    case 'hooks.transformsDir':
      return config.hooks.transformsDir;
    case 'hooks.maxTransformProcesses':
      return config.hooks.maxTransformProcesses;
    case 'agents': {
      // Budgets are read at every claim, so a reload applies them.
      const { budget: _d, ...defaults } = config.agents.defaults;
      return { defaults, list: config.agents.list.map(({ budget: _b, ...agent }) => agent) };
    }
    default:
      return config[key];
  }
}

/** The restart-only keys whose value differs between two configs. */
export function restartOnlyChanges(before: Config, after: Config): string[] {
  return RESTART_ONLY_KEYS.filter((key) => JSON.stringify(pick(before, key)) !== JSON.stringify(pick(after, key)));
}
