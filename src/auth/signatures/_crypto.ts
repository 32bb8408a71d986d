import { createHmac, timingSafeEqual, type BinaryLike } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { VerifyResult } from './verify-types.js';

/** A secret or a rotation list, as a list. */
export function secretsOf(secret: string | readonly string[]): readonly string[] {
  return typeof secret === 'string' ? [secret] : secret;
}

/** One header's value; a repeated header is refused (a sender signs once). */
export function headerOf(headers: IncomingHttpHeaders, name: string): string | undefined {
  const v = headers[name.toLowerCase()];
  return typeof v === 'string' ? v : undefined;
}

export function hmac(algorithm: string, key: BinaryLike, parts: readonly (string | Buffer)[]): Buffer {
  const h = createHmac(algorithm, key);
  for (const p of parts) h.update(p);
  return h.digest();
}

const HEX = /^[0-9a-f]+$/i;
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/** Decodes a digest written as hex or base64; `undefined` when it is not well formed. */
export function decodeDigest(text: string, encoding: 'hex' | 'base64'): Buffer | undefined {
  if (encoding === 'hex') return HEX.test(text) && text.length % 2 === 0 ? Buffer.from(text, 'hex') : undefined;
  return BASE64.test(text) ? Buffer.from(text, 'base64') : undefined;
}

/**
 * Constant-time comparison of an expected digest with a received one. The length of a digest is
 * public (it follows from the algorithm), so only equal-length buffers reach `timingSafeEqual`.
 */
export function sameDigest(expected: Buffer, received: Buffer | undefined): boolean {
  return received !== undefined && received.length === expected.length && timingSafeEqual(expected, received);
}

/** Whether a Unix-seconds timestamp is within `toleranceSeconds` of now, in either direction. */
export function checkTimestamp(
  text: string | undefined,
  nowMs: number,
  toleranceSeconds: number,
): VerifyResult | number {
  if (text === undefined || !/^\d{1,12}$/.test(text)) return { ok: false, reason: 'missing or malformed timestamp' };
  const seconds = Number(text);
  const skew = nowMs / 1000 - seconds;
  if (skew > toleranceSeconds)
    return { ok: false, reason: `timestamp is older than ${toleranceSeconds} s (a replay?)` };
  if (skew < -toleranceSeconds)
    return { ok: false, reason: `timestamp is more than ${toleranceSeconds} s in the future` };
  return seconds;
}

/** The body's top-level string field `key`, when the body is a JSON object that has one. */
export function jsonStringField(rawBody: Buffer, key: string): string | undefined {
  try {
    const value: unknown = JSON.parse(rawBody.toString('utf8'));
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
    const field = (value as Record<string, unknown>)[key];
    return typeof field === 'string' && field !== '' ? field : undefined;
  } catch {
    return undefined;
  }
}
