import type { Issue } from '../common/errors.js';

/** A JSON object as received: every value untrusted. */
export type Payload = Record<string, unknown>;

const has = (p: Payload, key: string): boolean => Object.hasOwn(p, key) && p[key] !== undefined;

/** An unpaired UTF-16 surrogate: JSON can carry one, but it is not text and would not survive storage. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function checkText(key: string, v: string, issues: Issue[]): boolean {
  if (LONE_SURROGATE.test(v)) {
    issues.push({ path: key, message: `${key} contains an unpaired UTF-16 surrogate (not valid Unicode)` });
    return false;
  }
  // PostgreSQL text cannot hold U+0000; refused on every store alike, before anything is written.
  if (v.includes('\u0000')) {
    issues.push({ path: key, message: `${key} contains a NUL character (U+0000)` });
    return false;
  }
  return true;
}

/** A required non-blank string; pushes an issue naming `key` otherwise. */
export function readRequiredString(p: Payload, key: string, issues: Issue[]): string {
  const v = p[key];
  if (!has(p, key) || v === null) {
    issues.push({ path: key, message: `${key} is required` });
    return '';
  }
  if (typeof v !== 'string') {
    issues.push({ path: key, message: `${key} must be a string` });
    return '';
  }
  const trimmed = v.trim();
  if (trimmed === '') issues.push({ path: key, message: `${key} must not be empty` });
  else checkText(key, v, issues);
  // Recorded trimmed: surrounding whitespace is an artefact of how the sender built the text.
  return trimmed;
}

/** An optional string; blank counts as absent when `blankIsAbsent`. */
export function readOptionalString(p: Payload, key: string, issues: Issue[]): string | undefined {
  if (!has(p, key)) return undefined;
  const v = p[key];
  if (typeof v !== 'string') {
    issues.push({ path: key, message: `${key} must be a string` });
    return undefined;
  }
  if (v.trim() === '') {
    issues.push({ path: key, message: `${key} must not be empty` });
    return undefined;
  }
  return checkText(key, v, issues) ? v.trim() : undefined;
}

/** An optional value from a fixed set of strings. */
export function readOptionalEnum<T extends string>(
  p: Payload,
  key: string,
  allowed: readonly T[],
  issues: Issue[],
): T | undefined {
  if (!has(p, key)) return undefined;
  const v = p[key];
  if (typeof v !== 'string' || !(allowed as readonly string[]).includes(v)) {
    issues.push({ path: key, message: `${key} must be one of: ${allowed.join(', ')}` });
    return undefined;
  }
  return v as T;
}

export function readOptionalBoolean(p: Payload, key: string, issues: Issue[]): boolean | undefined {
  if (!has(p, key)) return undefined;
  const v = p[key];
  if (typeof v !== 'boolean') {
    issues.push({ path: key, message: `${key} must be true or false` });
    return undefined;
  }
  return v;
}

/** An optional positive finite number, at most `max`. */
export function readOptionalPositiveNumber(p: Payload, key: string, max: number, issues: Issue[]): number | undefined {
  if (!has(p, key)) return undefined;
  const v = p[key];
  if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0) {
    issues.push({ path: key, message: `${key} must be a positive number` });
    return undefined;
  }
  if (v > max) {
    issues.push({ path: key, message: `${key} must be at most ${max}` });
    return undefined;
  }
  return v;
}
