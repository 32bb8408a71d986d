import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { homedir } from 'node:os';
import JSON5 from 'json5';
import type { z } from 'zod';
import { ConfigError, type Issue } from '../common/errors.js';
import { checkConfigRules, normalizeHooksPath, resolveTransformsDir } from './check-config-rules.js';
import { checkConfigWarnings } from './check-config-warnings.js';
import { checkMappingRules } from './check-mapping-rules.js';
import { ConfigSchema, type Config } from './schema.js';
import { coerceEnvValues, dotPath, type TypeMismatch } from './coerce-env-values.js';
import { stripForeignKeys } from './strip-foreign-keys.js';
import { keysAt, suggestKey } from './suggest-key.js';
import { standInForUnusedSecret, substituteEnv } from './substitute-env.js';
import { mappingHookId } from './mapping-hook-id.js';

export type Env = Readonly<Record<string, string | undefined>>;

/** A validated config and where it came from. Relative paths inside it are already resolved. */
export interface LoadedConfig {
  config: Config;
  /** Absolute path of the config file. */
  path: string;
  /** Directory of the config file; relative paths in the config resolve against it. */
  dir: string;
  /** Effective transforms directory (absolute). */
  transformsDir: string;
  /** Settings that are allowed but worth an operator's attention. */
  warnings: Issue[];
  /**
   * The API token of each mapping with `catchUp`, by mapping id, read from the environment variable
   * its `tokenEnv` names (a mapping whose variable is unset or empty has none, and a warning).
   */
  catchUpTokens: ReadonlyMap<string, string>;
}

/** `$HOOKGATE_HOME`, default `~/.hookgate`. */
function resolveHome(env: Env): string {
  return env['HOOKGATE_HOME'] ?? join(homedir(), '.hookgate');
}

/** `--config`, else `$HOOKGATE_CONFIG`, else `$HOOKGATE_HOME/hookgate.json`. */
export function resolveConfigPath(flag: string | undefined, env: Env): string {
  return resolve(flag ?? env['HOOKGATE_CONFIG'] ?? join(resolveHome(env), 'hookgate.json'));
}

const formatPath = dotPath;

function typeMismatches(error: z.ZodError): TypeMismatch[] {
  const out: TypeMismatch[] = [];
  for (const i of error.issues) {
    if (i.code !== 'invalid_type') continue;
    if (i.expected === 'number') out.push({ path: i.path, expected: 'number' });
    else if (i.expected === 'boolean') out.push({ path: i.path, expected: 'boolean' });
  }
  return out;
}

/** `HOOKGATE_PORT` overrides `gateway.port` (containers and process managers set the port this way). */
function portFromEnv(env: Env, issues: Issue[]): number | undefined {
  const raw = env['HOOKGATE_PORT'];
  if (raw === undefined || raw === '') return undefined;
  const port = Number(raw);
  if (!/^\d+$/.test(raw) || port > 65_535) {
    issues.push({ path: 'HOOKGATE_PORT', message: `"${raw}" is not a port number (0-65535)` });
    return undefined;
  }
  return port;
}

function toIssues(error: z.ZodError): Issue[] {
  const issues: Issue[] = [];
  for (const i of error.issues) {
    if (i.code === 'unrecognized_keys') {
      const known = keysAt(ConfigSchema, i.path);
      for (const key of i.keys) {
        const meant = suggestKey(key, known);
        const message = meant === undefined ? 'unknown key' : `unknown key (did you mean "${meant}"?)`;
        issues.push({ path: formatPath([...i.path, key]), message });
      }
    } else {
      issues.push({ path: formatPath(i.path), message: i.message });
    }
  }
  return issues;
}

/**
 * `readOnly`: for a command that only reads the store, an unset variable in a credential outside
 * `store` is not an error (the command never uses it); everything else is checked as for `serve`.
 */
interface ConfigReadOptions {
  path: string;
  env: Env;
  readOnly?: boolean;
}

/** Validates a parsed config document; returns every issue rather than the first. */
export function safeParseConfig(
  raw: unknown,
  options: ConfigReadOptions,
): { ok: true; loaded: LoadedConfig } | { ok: false; issues: Issue[] } {
  const envIssues: Issue[] = [];
  const foreign: Issue[] = [];
  const fromEnv = new Set<string>();
  const substituted = substituteEnv(
    stripForeignKeys(raw, foreign),
    options.env,
    envIssues,
    '',
    fromEnv,
    options.readOnly === true ? standInForUnusedSecret : undefined,
  );
  let parsed = ConfigSchema.safeParse(substituted);
  // A coerced value can uncover a deeper mismatch (defaults fill in behind it): a few rounds at most.
  for (let round = 0; round < 3 && !parsed.success; round++) {
    if (coerceEnvValues(substituted, typeMismatches(parsed.error), fromEnv) === 0) break;
    parsed = ConfigSchema.safeParse(substituted);
  }
  const port = portFromEnv(options.env, envIssues);
  if (!parsed.success) return { ok: false, issues: [...envIssues, ...toIssues(parsed.error)] };
  if (port !== undefined) parsed.data.gateway.port = port;
  const dir = dirname(options.path);
  const issues = [...envIssues, ...checkConfigRules(parsed.data, dir)];
  const transformsDir = resolveTransformsDir(dir, parsed.data.hooks.transformsDir);
  const mappings =
    transformsDir === null ? { issues: [], warnings: [] } : checkMappingRules(parsed.data, transformsDir);
  issues.push(...mappings.issues);
  if (issues.length > 0 || transformsDir === null) return { ok: false, issues };
  const config = parsed.data;
  config.hooks.path = normalizeHooksPath(config.hooks.path) ?? config.hooks.path;
  if (config.store.driver === 'sqlite' && !isAbsolute(config.store.path)) {
    config.store.path = resolve(dir, config.store.path);
  }
  const tokens = readCatchUpTokens(config, options.env);
  return {
    ok: true,
    loaded: {
      config,
      path: options.path,
      dir,
      transformsDir,
      warnings: [...foreign, ...checkConfigWarnings(config), ...mappings.warnings, ...tokens.warnings],
      catchUpTokens: tokens.tokens,
    },
  };
}

/**
 * Each catch-up mapping's token from the environment: read here, where the environment is, and kept
 * out of the config object (which is logged in parts, compared on reload and shown by the CLI).
 */
function readCatchUpTokens(config: Config, env: Env): { tokens: Map<string, string>; warnings: Issue[] } {
  const tokens = new Map<string, string>();
  const warnings: Issue[] = [];
  config.hooks.mappings.forEach((m, i) => {
    if (m.catchUp === undefined) return;
    const token = env[m.catchUp.tokenEnv];
    if (token === undefined || token === '') {
      warnings.push({
        path: `hooks.mappings[${i}].catchUp.tokenEnv`,
        message: `${m.catchUp.tokenEnv} is not set: this mapping does not catch up until it is`,
      });
      return;
    }
    tokens.set(mappingHookId(m, i), token);
  });
  return { tokens, warnings };
}

/** Parses JSON5 text, reporting a syntax error with its line and column. */
export function safeParseConfigText(
  text: string,
  options: ConfigReadOptions,
): { ok: true; loaded: LoadedConfig } | { ok: false; issues: Issue[] } {
  let raw: unknown;
  try {
    raw = JSON5.parse(text);
  } catch (error) {
    return { ok: false, issues: [{ path: '', message: `not valid JSON5: ${(error as Error).message}` }] };
  }
  return safeParseConfig(raw, options);
}

/** Reads and validates the config file; throws a `ConfigError` carrying every issue. */
export function readConfig(path: string, env: Env, options: { readOnly?: boolean } = {}): LoadedConfig {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new ConfigError([{ path: '', message: `cannot read ${path}: ${(error as Error).message}` }]);
  }
  const result = safeParseConfigText(text, { path, env, ...options });
  if (!result.ok) throw new ConfigError(result.issues, `Invalid configuration in ${path}`);
  return result.loaded;
}
