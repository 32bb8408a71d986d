import { z } from 'zod';

const nonEmpty = z.string().min(1);

const secretList = z.union([nonEmpty, z.array(nonEmpty).min(1)]);
const secret = secretList.describe('The shared secret, or a list of them while rotating (any one verifies).');
const toleranceSeconds = z
  .number()
  .int()
  .min(1)
  .max(86_400)
  .optional()
  .describe('Accepted distance between the signed timestamp and now, either way. @default 300');
const required = z
  .boolean()
  .optional()
  .describe('Refuse the hook token for this mapping: only a valid signature is accepted. @default `false`');

/** How a mapping's sender signs its requests; checked over the raw body before it is parsed. */
export const VerifySchema = z.discriminatedUnion('kind', [
  z
    .strictObject({ kind: z.literal('github'), secret, required })
    .describe('GitHub: `X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the body>`.'),
  z
    .strictObject({ kind: z.literal('stripe'), secret, toleranceSeconds, required })
    .describe('Stripe: `Stripe-Signature: t=<unix>,v1=<hex HMAC-SHA256 of "<t>.<body>">`; the secret is `whsec_...`.'),
  z
    .strictObject({ kind: z.literal('slack'), secret, toleranceSeconds, required })
    .describe(
      'Slack: `X-Slack-Signature: v0=<hex HMAC-SHA256 of "v0:<X-Slack-Request-Timestamp>:<body>">`; ' +
        "the secret is the app's signing secret.",
    ),
  z
    .strictObject({
      kind: z.literal('standard-webhooks'),
      secret: secretList.optional().describe('`whsec_<base64>` keys for `v1,` (HMAC-SHA256) signatures.'),
      publicKey: secretList.optional().describe('`whpk_<base64>` Ed25519 public keys for `v1a,` signatures.'),
      toleranceSeconds,
      required,
    })
    .describe(
      'Standard Webhooks: `webhook-id`, `webhook-timestamp` and `webhook-signature` over `"<id>.<timestamp>.<body>"`; ' +
        'a `secret`, a `publicKey` or both.',
    ),
  z
    .strictObject({
      kind: z.literal('hmac'),
      secret,
      header: nonEmpty.describe('Header carrying the signature, e.g. `x-signature`.'),
      algorithm: z.enum(['sha1', 'sha256', 'sha512']).optional().describe('HMAC digest. @default `sha256`'),
      encoding: z.enum(['hex', 'base64']).optional().describe('How the digest is written. @default `hex`'),
      prefix: z.string().optional().describe('Text before the digest in the header, e.g. `sha256=`. @default `""`'),
      required,
    })
    .describe('Any sender that puts an HMAC of the body in a header: `<header>: <prefix><digest>`.'),
]);
