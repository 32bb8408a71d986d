import type { Issue } from '../common/errors.js';

const PATTERN = /\$\$\{|\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/**
 * Replaces `${NAME}` in every string of a parsed config with the environment variable's value.
 * `$${` stands for a literal `${`. A variable that is unset is reported at its dot-path. The
 * dot-paths of strings that took a value are added to `substituted` (numbers and booleans are
 * coerced there only, and only where the schema wants one: see `coerceEnvValues`). `unset` may
 * stand in for an unset variable (its text is used and nothing is reported) or decline (`undefined`).
 */
export function substituteEnv(
  value: unknown,
  env: Readonly<Record<string, string | undefined>>,
  issues: Issue[],
  path = '',
  substituted?: Set<string>,
  unset?: (path: string, name: string) => string | undefined,
): unknown {
  if (typeof value === 'string') {
    return value.replace(PATTERN, (whole, name: string | undefined) => {
      if (name === undefined) return '${';
      const v = env[name];
      if (v === undefined) {
        const standIn = unset?.(path, name);
        if (standIn !== undefined) return standIn;
        issues.push({ path, message: `environment variable ${name} is not set` });
        return whole;
      }
      substituted?.add(path);
      return v;
    });
  }
  if (Array.isArray(value))
    return value.map((v, i) => substituteEnv(v, env, issues, `${path}[${i}]`, substituted, unset));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      out[k] = substituteEnv(v, env, issues, path === '' ? k : `${path}.${k}`, substituted, unset);
    }
    return out;
  }
  return value;
}

/** A key whose value is a credential: a token, a secret, a password, an API key, an auth header. */
const SECRET_PATH = /(?:^|\.)[^.]*(?:token|secret|passw|api[-_]?key|authorization|credential)[^.]*$/i;

/**
 * For commands that only read the store (`status`, `runs`, `events`, `sessions`, `deliveries`,
 * `prune --dry-run`): an unset variable in a credential the command never uses (every one outside
 * `store`) gets a stand-in that says so, long enough for the length rules.
 */
export function standInForUnusedSecret(path: string, name: string): string | undefined {
  if (path === 'store' || path.startsWith('store.') || !SECRET_PATH.test(path)) return undefined;
  return `unresolved \${${name}}`.padEnd(32, '.');
}
