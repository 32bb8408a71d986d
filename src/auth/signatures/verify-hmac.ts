import { decodeDigest, headerOf, hmac, sameDigest, secretsOf } from './_crypto.js';
import type { VerifyInput, VerifyResult } from './verify-types.js';

/** A generic HMAC over the raw body, for senders that follow none of the named schemes. */
interface HmacSpec {
  secret: string | readonly string[];
  header: string;
  /** @default 'sha256' */
  algorithm?: 'sha1' | 'sha256' | 'sha512' | undefined;
  /** @default 'hex' */
  encoding?: 'hex' | 'base64' | undefined;
  /** Text before the digest, such as `sha256=`. @default '' */
  prefix?: string | undefined;
}

/** `<header>: <prefix><digest>` where digest is HMAC-<algorithm>(secret, body) in `encoding`. */
export function verifyHmac(spec: HmacSpec, input: VerifyInput): VerifyResult {
  const prefix = spec.prefix ?? '';
  const header = headerOf(input.headers, spec.header);
  if (header === undefined || !header.startsWith(prefix)) return { ok: false, reason: `missing ${spec.header}` };
  const received = decodeDigest(header.slice(prefix.length).trim(), spec.encoding ?? 'hex');
  const algorithm = spec.algorithm ?? 'sha256';
  const ok = secretsOf(spec.secret).some((s) => sameDigest(hmac(algorithm, s, [input.rawBody]), received));
  return ok ? { ok: true } : { ok: false, reason: `${spec.header} does not match the body` };
}
