import { existsSync, realpathSync, statSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { isInsideDir } from '../common/is-inside-dir.js';
import type { Issue } from '../common/errors.js';
import { findInvalidExpressions } from '../common/template-syntax.js';
import { checkMappingTrust } from './check-mapping-trust.js';
import { resolveModel } from './resolve-model.js';
import { THINKING_LEVELS, type Config, type MappingConfig, type VerifyConfig } from './schema.js';
import { parseDurationMs } from '../common/parse-duration.js';

/** Hook names served by the built-in endpoints; no mapping may claim them. */
export const RESERVED_HOOK_NAMES: ReadonlySet<string> = new Set(['wake', 'agent']);

/** `/a/b/` → `a/b`: leading and trailing slashes do not matter in hook names. */
export function trimSlashes(path: string): string {
  return path.replace(/^\/+|\/+$/g, '');
}

/** Whether a transform module path is written as a plain relative path (no absolute path, no `..`). */
export function isPlainRelative(module: string): boolean {
  return !isAbsolute(module) && !module.split(/[\\/]/).includes('..');
}

/** The text before the first `{{`: every rendering of the template starts with it. */
function fixedStart(template: string): string {
  const i = template.indexOf('{{');
  return i === -1 ? template : template.slice(0, i);
}

/**
 * Whether some rendering of a session-key template can start with one of the prefixes: its fixed
 * start must either already begin with a prefix, or be the beginning of one (the rest rendered).
 */
function canSatisfyPrefixes(template: string, prefixes: readonly string[]): boolean {
  const start = fixedStart(template);
  const literal = !template.includes('{{');
  return prefixes.some((p) => start.startsWith(p) || (!literal && p.startsWith(start)));
}

const TEMPLATED = ['messageTemplate', 'textTemplate', 'name', 'sessionKey', 'to', 'model', 'thinking'] as const;

/**
 * Checks a transform module path: relative, no `..`, inside the transforms directory once
 * symlinks are resolved, and an existing file. Returns the problem, or `null`.
 */
function checkTransformModule(transformsDir: string, module: string): string | null {
  if (!isPlainRelative(module)) {
    return isAbsolute(module)
      ? 'must be a path relative to the transforms directory, not an absolute path'
      : 'must not contain ".." (it must stay inside the transforms directory)';
  }
  const file = resolve(transformsDir, module);
  if (!isInsideDir(transformsDir, file)) return `must stay inside ${transformsDir}`;
  if (!existsSync(file)) return `not found: ${file}`;
  if (!isInsideDir(realpathSync(existsSync(transformsDir) ? transformsDir : file), realpathSync(file))) {
    return `resolves outside ${transformsDir} (through a symlink)`;
  }
  if (!statSync(file).isFile()) return `is not a file: ${file}`;
  return null;
}

/**
 * A caught-up event goes to the mapping's own hook name, carrying the provider's id the way a
 * signed delivery does: so one that arrived already is recognised as a duplicate.
 */
function checkCatchUp(m: MappingConfig, at: string): Issue[] {
  const c = m.catchUp!;
  const issues: Issue[] = [];
  if (m.match?.path === undefined || trimSlashes(m.match.path) === '') {
    issues.push({ path: at, message: "needs the mapping's match.path: the hook name caught-up events are sent to" });
  }
  if (m.verify?.kind !== c.provider) {
    issues.push({
      path: at,
      message: `needs verify.kind "${c.provider}" on the mapping: caught-up events carry the id a signed delivery does, so one that arrived already is a duplicate`,
    });
  }
  if (c.provider === 'github' && (c.repo === undefined) === (c.org === undefined)) {
    issues.push({ path: at, message: 'name the webhook\'s repo ("owner/name") or its org, not both' });
  }
  if (parseDurationMs(c.every) === null) issues.push({ path: `${at}.every`, message: 'a duration such as 10m, or 0' });
  return issues;
}

const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/** Keys are decoded at startup, so a key that cannot be is a config issue rather than 401s later. */
function checkVerify(verify: VerifyConfig, at: string): Issue[] {
  if (verify.kind !== 'standard-webhooks') return [];
  const issues: Issue[] = [];
  const list = (v: string | string[] | undefined): string[] => (v === undefined ? [] : typeof v === 'string' ? [v] : v);
  if (verify.secret === undefined && verify.publicKey === undefined) {
    issues.push({ path: at, message: 'standard-webhooks needs a secret (whsec_…) or a publicKey (whpk_…)' });
  }
  for (const s of list(verify.secret)) {
    if (!BASE64.test(s.replace(/^whsec_/, '')))
      issues.push({ path: `${at}.secret`, message: 'must be whsec_<base64>' });
  }
  for (const k of list(verify.publicKey)) {
    const body = k.replace(/^whpk_/, '');
    if (!BASE64.test(body) || Buffer.from(body, 'base64').length !== 32) {
      issues.push({ path: `${at}.publicKey`, message: 'must be whpk_<base64 of a 32-byte Ed25519 public key>' });
    }
  }
  return issues;
}

/** Startup rules for `hooks.mappings` (and the presets' settings), plus warnings worth printing. */
export function checkMappingRules(config: Config, transformsDir: string): { issues: Issue[]; warnings: Issue[] } {
  const { hooks } = config;
  const issues: Issue[] = [];
  const warnings: Issue[] = [];
  const ids = new Set<string>();
  hooks.mappings.forEach((m, i) => {
    const at = `hooks.mappings[${i}]`;
    if (m.id !== undefined) {
      if (ids.has(m.id)) issues.push({ path: `${at}.id`, message: `duplicate mapping id "${m.id}"` });
      ids.add(m.id);
      // Runs are recorded, budgeted and counted by hook id: sharing one with a built-in endpoint or
      // an enabled preset would count their runs as this mapping's.
      if (RESERVED_HOOK_NAMES.has(m.id) || (hooks.presets as readonly string[]).includes(m.id)) {
        issues.push({
          path: `${at}.id`,
          message: `"${m.id}" is the id of ${RESERVED_HOOK_NAMES.has(m.id) ? 'a built-in endpoint' : 'an enabled preset'}; choose another`,
        });
      }
    }
    const path = m.match?.path === undefined ? undefined : trimSlashes(m.match.path);
    if (path !== undefined && RESERVED_HOOK_NAMES.has(path)) {
      issues.push({ path: `${at}.match.path`, message: `"${path}" is a built-in endpoint and cannot be mapped` });
    }
    const templates: Array<[string, string | undefined]> = [
      ...TEMPLATED.map((k) => [k, m[k]] as [string, string | undefined]),
      ['coalesce.key', m.coalesce?.key],
    ];
    for (const [key, value] of templates) {
      if (value === undefined) continue;
      for (const expr of findInvalidExpressions(value)) {
        issues.push({
          path: `${at}.${key}`,
          message: `"{{${expr}}}" is not a path such as payload.a.b or messages[0].id`,
        });
      }
    }
    // Literal values (no template) can be checked now, rather than failing every call later.
    const literal = (v: string | undefined): v is string => v !== undefined && !v.includes('{{');
    if (literal(m.thinking) && !(THINKING_LEVELS as readonly string[]).includes(m.thinking)) {
      issues.push({ path: `${at}.thinking`, message: `must be one of: ${THINKING_LEVELS.join(', ')}` });
    }
    if (literal(m.model)) {
      const r = resolveModel(config, m.model);
      if (!r.ok) issues.push({ path: `${at}.model`, message: r.message });
    }
    const prefixes = hooks.allowedSessionKeyPrefixes;
    if (m.sessionKey !== undefined && prefixes !== undefined && !canSatisfyPrefixes(m.sessionKey, prefixes)) {
      issues.push({
        path: `${at}.sessionKey`,
        message: literal(m.sessionKey)
          ? 'does not start with any of hooks.allowedSessionKeyPrefixes'
          : `can never start with any of hooks.allowedSessionKeyPrefixes: its fixed start "${fixedStart(m.sessionKey)}" rules them out`,
      });
    }
    if (
      m.channel !== undefined &&
      m.channel !== 'last' &&
      m.deliver !== false &&
      config.channels[m.channel] === undefined
    ) {
      issues.push({
        path: `${at}.channel`,
        message: `channel ${m.channel} is not configured (channels.${m.channel}); configure it or set deliver: false`,
      });
    }
    if (m.transform !== undefined) {
      const problem = checkTransformModule(transformsDir, m.transform.module);
      if (problem !== null) issues.push({ path: `${at}.transform.module`, message: problem });
    }
    if (m.verify !== undefined) issues.push(...checkVerify(m.verify, `${at}.verify`));
    if (m.catchUp !== undefined) issues.push(...checkCatchUp(m, `${at}.catchUp`));
    const trust = checkMappingTrust(m, i);
    if (trust.issue !== null) issues.push(trust.issue);
    if (trust.warning !== null) warnings.push(trust.warning);
    if (m.allowUnsafeExternalContent === true) {
      warnings.push({
        path: `${at}.allowUnsafeExternalContent`,
        message:
          'hook content reaches the model without the untrusted-content wrapper; use only for trusted internal sources',
      });
    }
  });
  const prefixes = hooks.allowedSessionKeyPrefixes;
  if (hooks.presets.includes('gmail') && prefixes !== undefined && !prefixes.some((p) => 'hook:gmail:'.startsWith(p))) {
    issues.push({
      path: 'hooks.presets',
      message: 'the gmail preset uses session keys hook:gmail:<id>; hooks.allowedSessionKeyPrefixes must allow them',
    });
  }
  if (hooks.presets.includes('gmail') && hooks.gmail?.allowUnsafeExternalContent === true) {
    warnings.push({
      path: 'hooks.gmail.allowUnsafeExternalContent',
      message: 'mail content reaches the model without the untrusted-content wrapper',
    });
  }
  return { issues, warnings };
}
