import { z } from 'zod';

const nonEmpty = z.string().min(1);

/** One secret, or a list while rotating (any of them verifies). */
const secretList = z.union([nonEmpty, z.array(nonEmpty).min(1)]);
/** Accepted distance between a signed timestamp and now, either way. @default 300 */
const toleranceSeconds = z.number().int().min(1).max(86_400).optional();
/** Refuse the hook token for this mapping: only a valid signature is accepted. @default false */
const required = z.boolean().optional();

/** How a mapping's sender signs its requests; checked over the raw body before it is parsed. */
export const VerifySchema = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('github'), secret: secretList, required }),
  z.strictObject({ kind: z.literal('stripe'), secret: secretList, toleranceSeconds, required }),
  z.strictObject({ kind: z.literal('slack'), secret: secretList, toleranceSeconds, required }),
  z.strictObject({
    kind: z.literal('standard-webhooks'),
    /** `whsec_<base64>` keys for `v1,` (HMAC-SHA256) signatures. */
    secret: secretList.optional(),
    /** `whpk_<base64>` Ed25519 public keys for `v1a,` signatures. */
    publicKey: secretList.optional(),
    toleranceSeconds,
    required,
  }),
  z.strictObject({
    kind: z.literal('hmac'),
    secret: secretList,
    /** Header carrying the signature, e.g. `x-signature`. */
    header: nonEmpty,
    algorithm: z.enum(['sha1', 'sha256', 'sha512']).optional(),
    encoding: z.enum(['hex', 'base64']).optional(),
    /** Text before the digest in the header, e.g. `sha256=`. @default '' */
    prefix: z.string().optional(),
    required,
  }),
]);
