import { checkTimestamp, decodeDigest, headerOf, hmac, jsonStringField, sameDigest, secretsOf } from './_crypto.js';
import { DEFAULT_TOLERANCE_SECONDS, type VerifyInput, type VerifyResult } from './verify-types.js';

/**
 * Stripe: `Stripe-Signature: t=<unix seconds>,v1=<hex>[,v1=<hex>…]`, each `v1` an HMAC-SHA256 of
 * `<t>.<body>` keyed with the endpoint's signing secret (`whsec_…`, used as is). Any `v1` may match
 * (Stripe sends one per active secret while a secret is being rolled); `v0` is ignored.
 */
export function verifyStripe(
  spec: { secret: string | readonly string[]; toleranceSeconds?: number | undefined },
  input: VerifyInput,
): VerifyResult {
  const header = headerOf(input.headers, 'stripe-signature');
  if (header === undefined) return { ok: false, reason: 'missing Stripe-Signature' };
  let t: string | undefined;
  const v1: Buffer[] = [];
  for (const part of header.split(',')) {
    const eq = part.indexOf('=');
    if (eq === -1) continue;
    const key = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (key === 't' && t === undefined) t = value;
    if (key === 'v1') {
      const digest = decodeDigest(value, 'hex');
      if (digest !== undefined) v1.push(digest);
    }
  }
  const time = checkTimestamp(t, input.nowMs, spec.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS);
  if (typeof time !== 'number') return time;
  if (v1.length === 0) return { ok: false, reason: 'Stripe-Signature has no v1 signature' };
  const ok = secretsOf(spec.secret).some((s) => {
    const expected = hmac('sha256', s, [`${t}.`, input.rawBody]);
    // Check every candidate so the time taken does not depend on which one matched.
    return v1.map((d) => sameDigest(expected, d)).includes(true);
  });
  if (!ok) return { ok: false, reason: 'Stripe-Signature does not match the body' };
  const deliveryId = jsonStringField(input.rawBody, 'id');
  return deliveryId === undefined ? { ok: true } : { ok: true, deliveryId };
}
