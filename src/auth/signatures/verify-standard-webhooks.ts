import { createPublicKey, verify as verifyEd25519, type KeyObject } from 'node:crypto';
import { checkTimestamp, decodeDigest, headerOf, hmac, sameDigest, secretsOf } from './_crypto.js';
import { DEFAULT_TOLERANCE_SECONDS, type VerifyInput, type VerifyResult } from './verify-types.js';

/**
 * Keys of a Standard Webhooks endpoint: `whsec_<base64>` symmetric keys (`v1,` HMAC-SHA256) and
 * `whpk_<base64>` Ed25519 public keys (`v1a,`), each decoded once.
 */
interface StandardWebhooksKeys {
  secrets: readonly Buffer[];
  publicKeys: readonly KeyObject[];
  toleranceSeconds: number;
}

const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;
/**
 * Entries of `webhook-signature` read, at most: a sender lists one per key it signs with (a few
 * during a rotation); a header of thousands would otherwise cost an Ed25519 check each.
 */
export const MAX_ENTRIES = 8;
const HMAC_SHA256_BYTES = 32;

function decodeKey(text: string, prefix: string, what: string): Buffer {
  const body = text.startsWith(prefix) ? text.slice(prefix.length) : text;
  if (!BASE64.test(body)) throw new Error(`${what} must be ${prefix}<base64>`);
  return Buffer.from(body, 'base64');
}

/**
 * Decodes the configured keys.
 * @throws Error naming the key that is not `whsec_…`/`whpk_…` base64 (checked at startup).
 */
export function createStandardWebhooksKeys(spec: {
  secret?: string | readonly string[] | undefined;
  publicKey?: string | readonly string[] | undefined;
  toleranceSeconds?: number | undefined;
}): StandardWebhooksKeys {
  const secrets = spec.secret === undefined ? [] : secretsOf(spec.secret).map((s) => decodeKey(s, 'whsec_', 'secret'));
  const publicKeys =
    spec.publicKey === undefined
      ? []
      : secretsOf(spec.publicKey).map((k) => {
          const raw = decodeKey(k, 'whpk_', 'publicKey');
          if (raw.length !== 32) throw new Error('publicKey must be a 32-byte Ed25519 key (whpk_<base64>)');
          return createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: raw.toString('base64url') }, format: 'jwk' });
        });
  return { secrets, publicKeys, toleranceSeconds: spec.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS };
}

/**
 * Standard Webhooks: the signed content is `<webhook-id>.<webhook-timestamp>.<body>`;
 * `webhook-signature` is a space-separated list of `v1,<base64 HMAC-SHA256>` and
 * `v1a,<base64 Ed25519 signature>` entries, any one of which may match.
 */
export function verifyStandardWebhooks(keys: StandardWebhooksKeys, input: VerifyInput): VerifyResult {
  const id = headerOf(input.headers, 'webhook-id');
  const ts = headerOf(input.headers, 'webhook-timestamp');
  const header = headerOf(input.headers, 'webhook-signature');
  if (id === undefined || id === '' || header === undefined)
    return { ok: false, reason: 'missing webhook-id or webhook-signature' };
  const time = checkTimestamp(ts, input.nowMs, keys.toleranceSeconds);
  if (typeof time !== 'number') return time;
  const content = Buffer.concat([Buffer.from(`${id}.${ts}.`), input.rawBody]);
  // Each secret's HMAC is computed once, whatever the number of entries; entries past the first
  // MAX_ENTRIES are not read, so a header full of entries costs no more than a signed request.
  let digests: Buffer[] | undefined;
  let ok = false;
  for (const entry of header.split(' ', MAX_ENTRIES)) {
    const comma = entry.indexOf(',');
    if (comma === -1) continue;
    const version = entry.slice(0, comma);
    const signature = decodeDigest(entry.slice(comma + 1), 'base64');
    if (signature === undefined) continue;
    if (version === 'v1' && signature.length === HMAC_SHA256_BYTES) {
      digests ??= keys.secrets.map((key) => hmac('sha256', key, [content]));
      for (const digest of digests) if (sameDigest(digest, signature)) ok = true;
    } else if (version === 'v1a' && signature.length === 64) {
      for (const key of keys.publicKeys) if (verifyEd25519(null, content, key, signature)) ok = true;
    }
  }
  return ok ? { ok: true, deliveryId: id } : { ok: false, reason: 'webhook-signature does not match the body' };
}
