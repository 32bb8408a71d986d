import type { Issue } from '../common/errors.js';
import type { Config } from './schema.js';

/** Below this a hook token is guessable by a patient client the lockout only slows down. */
export const MIN_HOOK_TOKEN_LENGTH = 24;

/** Settings that work but weaken the gateway; printed by `hookgate check` and logged at startup. */
export function checkConfigWarnings(config: Config): Issue[] {
  const warnings: Issue[] = [];
  const token = config.hooks.token;
  if (token !== undefined && token.length < MIN_HOOK_TOKEN_LENGTH) {
    warnings.push({
      path: 'hooks.token',
      message: `is ${token.length} characters long; use at least ${MIN_HOOK_TOKEN_LENGTH} random characters (hookgate token generates one)`,
    });
  }
  config.hooks.mappings.forEach((m, i) => {
    // A mapping makes agent runs unless it says `action: "wake"` (a transform may switch it either way).
    if (m.budget !== undefined && m.action === 'wake' && m.transform === undefined) {
      warnings.push({
        path: `hooks.mappings[${i}].budget`,
        message: 'limits agent runs, and this mapping makes wakes (set action: "agent", or drop the budget)',
      });
    }
  });
  return warnings;
}
