import type { Issue } from '../common/errors.js';

/**
 * Keys an OpenClaw config carries that Hookgate has no use for. An OpenClaw `hooks` section is
 * meant to start here unchanged, so these are dropped with a warning instead of refused as
 * unknown; any other unknown key is still refused (it is more likely a typo).
 */
const FOREIGN_KEYS: Readonly<Record<string, { keys: readonly string[]; why: string }>> = {
  hooks: {
    keys: ['internal'],
    why: 'OpenClaw internal (in-process event) hooks have no counterpart in Hookgate; ignored',
  },
};

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** A copy of the document without the foreign keys; each one dropped is added to `warnings`. */
export function stripForeignKeys(raw: unknown, warnings: Issue[]): unknown {
  if (!isObject(raw)) return raw;
  const out: Record<string, unknown> = { ...raw };
  for (const [section, { keys, why }] of Object.entries(FOREIGN_KEYS)) {
    const value = out[section];
    if (!isObject(value)) continue;
    const copy: Record<string, unknown> = { ...value };
    for (const key of keys) {
      if (!Object.hasOwn(copy, key)) continue;
      delete copy[key];
      warnings.push({ path: `${section}.${key}`, message: why });
    }
    out[section] = copy;
  }
  return out;
}
