import type { Issue } from '../common/errors.js';
import { checkRelayWarnings } from './check-relay-rules.js';
import type { Config } from './schema.js';

/** Below this a hook token is guessable by a patient client the lockout only slows down. */
const MIN_HOOK_TOKEN_LENGTH = 24;

/** Mapping keys that shape agent runs and that a wake does not carry. */
const AGENT_ONLY_KEYS = [
  'agentId',
  'sessionKey',
  'messageTemplate',
  'deliver',
  'channel',
  'to',
  'model',
  'thinking',
  'timeoutSeconds',
  'coalesce',
  'waitForCompletion',
  'returnReply',
] as const;

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
    if (m.action !== 'wake' || m.transform !== undefined) return;
    if (m.budget !== undefined) {
      warnings.push({
        path: `hooks.mappings[${i}].budget`,
        message: 'limits agent runs, and this mapping makes wakes (set action: "agent", or drop the budget)',
      });
    }
    // A wake goes to the default agent's main session with its text and mode; the rest shapes runs only.
    for (const key of AGENT_ONLY_KEYS) {
      if (m[key] === undefined) continue;
      warnings.push({
        path: `hooks.mappings[${i}].${key}`,
        message: `applies to agent runs, and this mapping makes wakes, which go to the default agent's main session (set action: "agent", or drop it)`,
      });
    }
  });
  warnings.push(...checkRelayWarnings(config));
  return warnings;
}
