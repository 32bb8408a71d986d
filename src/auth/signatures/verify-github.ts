import { decodeDigest, headerOf, hmac, sameDigest, secretsOf } from './_crypto.js';
import type { VerifyInput, VerifyResult } from './verify-types.js';

const PREFIX = 'sha256=';

/**
 * GitHub: `X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the body>` keyed with the webhook's
 * secret. GitHub signs no timestamp, so replays are left to idempotency on `X-GitHub-Delivery`.
 */
export function verifyGithub(secret: string | readonly string[], input: VerifyInput): VerifyResult {
  const header = headerOf(input.headers, 'x-hub-signature-256');
  if (header === undefined || !header.startsWith(PREFIX)) return { ok: false, reason: 'missing X-Hub-Signature-256' };
  const received = decodeDigest(header.slice(PREFIX.length), 'hex');
  const ok = secretsOf(secret).some((s) => sameDigest(hmac('sha256', s, [input.rawBody]), received));
  if (!ok) return { ok: false, reason: 'X-Hub-Signature-256 does not match the body' };
  const deliveryId = headerOf(input.headers, 'x-github-delivery');
  return deliveryId === undefined || deliveryId === '' ? { ok: true } : { ok: true, deliveryId };
}
