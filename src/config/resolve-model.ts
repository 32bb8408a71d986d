import type { Config } from './schema.js';

/** Provider id that is always available: the offline echo model. */
export const BUILTIN_ECHO_PROVIDER = 'echo';

/** Model used when neither the run, the agent nor the defaults name one. */
export const FALLBACK_MODEL = 'echo/echo';

type ModelResolution =
  | { ok: true; ref: string }
  | { ok: false; code: 'invalid_payload' | 'model_not_allowed'; message: string };

const REF = /^([^/\s]+)\/\S+$/;

/**
 * Resolves a requested model through `agents.defaults.models` aliases to a `<provider>/<model>`
 * ref, and checks it against the allow-list (restricted when that map has entries) and the
 * configured providers.
 */
export function resolveModel(config: Pick<Config, 'agents' | 'models'>, requested: string): ModelResolution {
  const allow = config.agents.defaults.models ?? {};
  const byAlias = Object.entries(allow).find(([, entry]) => entry.alias === requested);
  const ref = byAlias?.[0] ?? requested;
  const m = REF.exec(ref);
  if (m === null) {
    return { ok: false, code: 'invalid_payload', message: 'model must be "<provider>/<model>" or a configured alias' };
  }
  if (Object.keys(allow).length > 0 && !Object.hasOwn(allow, ref)) {
    return { ok: false, code: 'model_not_allowed', message: `model "${ref}" is not in agents.defaults.models` };
  }
  const provider = m[1]!;
  if (provider !== BUILTIN_ECHO_PROVIDER && !Object.hasOwn(config.models.providers, provider)) {
    return { ok: false, code: 'invalid_payload', message: `model provider "${provider}" is not configured` };
  }
  return { ok: true, ref };
}
