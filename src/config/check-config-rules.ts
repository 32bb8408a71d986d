import { existsSync, realpathSync } from 'node:fs';
import { isIP } from 'node:net';
import { join, resolve } from 'node:path';
import { isInsideDir } from '../common/is-inside-dir.js';
import type { Issue } from '../common/errors.js';
import { parseDurationMs } from '../common/parse-duration.js';
import { checkRelayRules } from './check-relay-rules.js';
import { checkSecurityRules } from './check-security-rules.js';
import { FALLBACK_MODEL, resolveModel } from './resolve-model.js';
import { MIN_HEARTBEAT_EVERY_MS, type Config } from './schema.js';

/** The longest delay a Node timer keeps (2^31 - 1 ms, about 24.8 days); a longer one fires after 1 ms. */
const MAX_TIMER_MS = 2_147_483_647;

/** Prefix every generated session key starts with (`hook:<uuid>`). */
export const GENERATED_SESSION_PREFIX = 'hook:';

/** Normalises `hooks.path`: leading slash required, trailing slashes dropped. `null` when invalid. */
export function normalizeHooksPath(raw: string): string | null {
  if (!raw.startsWith('/') || /[?#\s\\]|\/\//.test(raw)) return null;
  return raw.replace(/\/+$/, '');
}

/** The transforms root: `<config dir>/hooks/transforms`. */
function transformsRoot(configDir: string): string {
  return join(configDir, 'hooks', 'transforms');
}

/** Resolves `hooks.transformsDir` against the transforms root; `null` if it escapes it. */
export function resolveTransformsDir(configDir: string, dir: string | undefined): string | null {
  const root = transformsRoot(configDir);
  if (dir === undefined) return root;
  const target = resolve(root, dir);
  if (!isInsideDir(root, target)) return null;
  // A symlink inside the root may still point outside it.
  if (existsSync(target) && existsSync(root) && !isInsideDir(realpathSync(root), realpathSync(target))) return null;
  return target;
}

function isAddressOrCidr(value: string): boolean {
  const [addr, bits, extra] = value.split('/');
  if (extra !== undefined || addr === undefined) return false;
  const family = isIP(addr);
  if (family === 0) return false;
  if (bits === undefined) return true;
  if (!/^\d{1,3}$/.test(bits)) return false;
  return Number(bits) <= (family === 4 ? 32 : 128);
}

/** Paths the gateway serves itself, which `mcp.path` may not take. */
const FIXED_PATHS = ['/healthz', '/readyz', '/metrics', '/admin'];

/** `mcp`: a token of its own when enabled, and a path no other route serves. */
function checkMcpRules(config: Config, hooksBase: string | null): Issue[] {
  const { mcp, hooks, gateway } = config;
  const issues: Issue[] = [];
  if (mcp.enabled && mcp.token === undefined) {
    issues.push({ path: 'mcp.token', message: 'is required when mcp.enabled is true' });
  }
  if (mcp.token !== undefined && mcp.token === hooks.token) {
    issues.push({ path: 'mcp.token', message: 'must differ from hooks.token (the MCP token is dedicated)' });
  }
  if (mcp.token !== undefined && mcp.token === gateway.auth.token) {
    issues.push({ path: 'mcp.token', message: 'must differ from gateway.auth.token (the MCP token is dedicated)' });
  }
  const path = normalizeHooksPath(mcp.path);
  if (path === null || path === '') {
    issues.push({
      path: 'mcp.path',
      message: 'must start with "/", not be "/", and contain no "?", "#", "\\", "//" or spaces',
    });
  } else if (FIXED_PATHS.some((p) => path === p || path.startsWith(`${p}/`))) {
    issues.push({
      path: 'mcp.path',
      message: `must not be one of the gateway's own paths (${FIXED_PATHS.join(', ')})`,
    });
  } else if (hooksBase !== null && hooksBase !== '' && (path === hooksBase || path.startsWith(`${hooksBase}/`))) {
    issues.push({ path: 'mcp.path', message: 'must not lie under hooks.path' });
  }
  config.hooks.mappings.forEach((m, i) => {
    if (m.action === 'event' && !mcp.enabled)
      issues.push({
        path: `hooks.mappings[${i}].action`,
        message: '"event" publishes to MCP subscribers only, and mcp.enabled is false (nothing would happen)',
      });
  });
  return issues;
}

/**
 * The rules no single-field schema can express. Every broken rule is returned, none thrown, so
 * `hookgate check` can print them all at once.
 */
export function checkConfigRules(config: Config, configDir: string): Issue[] {
  const issues: Issue[] = checkSecurityRules(config);
  const { hooks, gateway, agents } = config;
  if (hooks.enabled && hooks.token === undefined) {
    issues.push({ path: 'hooks.token', message: 'is required when hooks.enabled is true' });
  }
  if (hooks.token !== undefined && hooks.token === gateway.auth.token) {
    issues.push({ path: 'hooks.token', message: 'must differ from gateway.auth.token (the hook token is dedicated)' });
  }
  const base = normalizeHooksPath(hooks.path);
  if (base === null) {
    issues.push({ path: 'hooks.path', message: 'must start with "/" and contain no "?", "#", "\\", "//" or spaces' });
  } else if (base === '') {
    issues.push({ path: 'hooks.path', message: 'must not be "/" (hooks need their own prefix, such as "/hooks")' });
  }
  issues.push(...checkMcpRules(config, base));
  issues.push(...checkRelayRules(config, base));
  const prefixes = hooks.allowedSessionKeyPrefixes;
  if (prefixes !== undefined) {
    if (hooks.defaultSessionKey === undefined && !prefixes.some((p) => GENERATED_SESSION_PREFIX.startsWith(p))) {
      issues.push({
        path: 'hooks.allowedSessionKeyPrefixes',
        message: 'must include "hook:" while hooks.defaultSessionKey is unset (generated session keys are hook:<uuid>)',
      });
    }
    const key = hooks.defaultSessionKey;
    if (key !== undefined && !prefixes.some((p) => key.startsWith(p))) {
      issues.push({
        path: 'hooks.defaultSessionKey',
        message: 'does not start with any of hooks.allowedSessionKeyPrefixes',
      });
    }
  }
  if (resolveTransformsDir(configDir, hooks.transformsDir) === null) {
    issues.push({
      path: 'hooks.transformsDir',
      message: `must stay inside ${transformsRoot(configDir)}`,
    });
  }
  gateway.trustedProxies.forEach((p, i) => {
    if (!isAddressOrCidr(p))
      issues.push({ path: `gateway.trustedProxies[${i}]`, message: 'is not an IP address or CIDR range' });
  });
  const seen = new Set<string>();
  agents.list.forEach((a, i) => {
    if (seen.has(a.id)) issues.push({ path: `agents.list[${i}].id`, message: `duplicate agent id "${a.id}"` });
    seen.add(a.id);
  });
  if (agents.list.filter((a) => a.default === true).length > 1) {
    issues.push({ path: 'agents.list', message: 'at most one agent may set default: true' });
  }
  // Node runs a longer timer after 1 ms: the heartbeat would tick, or a flood's pause end, at once.
  const timerDuration = (key: 'every' | 'floodPause', example: string, minMs = 0, least = ''): void => {
    const ms = parseDurationMs(agents.defaults.heartbeat[key]);
    const path = `agents.defaults.heartbeat.${key}`;
    if (ms === null) issues.push({ path, message: `must be a duration such as ${example} or 0 (off)` });
    else if (ms > MAX_TIMER_MS) issues.push({ path, message: 'must be at most 24 days ("24d")' });
    else if (ms > 0 && ms < minMs) issues.push({ path, message: `must be at least ${least}, or 0 (off)` });
  };
  // Each periodic tick is a paid model turn.
  timerDuration('every', '"30m", "1h"', MIN_HEARTBEAT_EVERY_MS, 'a minute ("1m")');
  timerDuration('floodPause', '"30s", "2m"');
  const aliases = new Map<string, string>();
  for (const [ref, entry] of Object.entries(agents.defaults.models ?? {})) {
    if (!/^[^/\s]+\/\S+$/.test(ref)) {
      issues.push({ path: `agents.defaults.models.${ref}`, message: 'model refs are "<provider>/<model>"' });
    }
    if (entry.alias !== undefined) {
      if (aliases.has(entry.alias)) {
        issues.push({ path: `agents.defaults.models.${ref}.alias`, message: `alias "${entry.alias}" is already used` });
      }
      aliases.set(entry.alias, ref);
    }
  }
  const models: Array<[string, string | undefined]> = [
    ['agents.defaults.model', agents.defaults.model],
    ...agents.list.map((a, i): [string, string | undefined] => [`agents.list[${i}].model`, a.model]),
    ['hooks.gmail.model', hooks.gmail?.model],
  ];
  for (const [path, ref] of models) {
    if (ref === undefined) continue;
    const r = resolveModel(config, ref);
    if (!r.ok) issues.push({ path, message: r.message });
  }
  // An agent that names no model runs on the fallback, which a restricted allow-list may not hold:
  // every one of its runs and heartbeats would fail, so say so now.
  const modelless = agents.list.length === 0 || agents.list.some((a) => a.model === undefined);
  if (agents.defaults.model === undefined && modelless && !resolveModel(config, FALLBACK_MODEL).ok) {
    issues.push({
      path: 'agents.defaults.model',
      message: `not set, so agents without a model would use "${FALLBACK_MODEL}", which is not in agents.defaults.models; set it to one of those models`,
    });
  }
  return issues;
}
