import type { Issue } from '../common/errors.js';

const PATTERN = /\$\$\{|\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/**
 * Replaces `${NAME}` in every string of a parsed config with the environment variable's value.
 * `$${` stands for a literal `${`. A variable that is unset is reported at its dot-path. The
 * dot-paths of strings that took a value are added to `substituted` (numbers and booleans are
 * coerced there only, and only where the schema wants one: see `coerceEnvValues`).
 */
export function substituteEnv(
  value: unknown,
  env: Readonly<Record<string, string | undefined>>,
  issues: Issue[],
  path = '',
  substituted?: Set<string>,
): unknown {
  if (typeof value === 'string') {
    return value.replace(PATTERN, (whole, name: string | undefined) => {
      if (name === undefined) return '${';
      const v = env[name];
      if (v === undefined) {
        issues.push({ path, message: `environment variable ${name} is not set` });
        return whole;
      }
      substituted?.add(path);
      return v;
    });
  }
  if (Array.isArray(value)) return value.map((v, i) => substituteEnv(v, env, issues, `${path}[${i}]`, substituted));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      out[k] = substituteEnv(v, env, issues, path === '' ? k : `${path}.${k}`, substituted);
    }
    return out;
  }
  return value;
}
