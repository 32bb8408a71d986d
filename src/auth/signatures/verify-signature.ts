import type { VerifyConfig } from '../../config/index.js';
import { verifyGithub } from './verify-github.js';
import { verifyHmac } from './verify-hmac.js';
import { verifySlack } from './verify-slack.js';
import { createStandardWebhooksKeys, verifyStandardWebhooks } from './verify-standard-webhooks.js';
import { verifyStripe } from './verify-stripe.js';
import type { VerifyInput, VerifyResult } from './verify-types.js';

/** A mapping's `verify` block made ready to check requests (keys decoded once). */
export type SignatureVerifier = (input: VerifyInput) => VerifyResult;

/**
 * Builds the verifier for one `verify` block.
 * @throws Error when a key cannot be decoded (a Standard Webhooks key that is not base64).
 */
export function createSignatureVerifier(spec: VerifyConfig): SignatureVerifier {
  switch (spec.kind) {
    case 'github':
      return (input) => verifyGithub(spec.secret, input);
    case 'stripe':
      return (input) => verifyStripe(spec, input);
    case 'slack':
      return (input) => verifySlack(spec, input);
    case 'standard-webhooks': {
      const keys = createStandardWebhooksKeys(spec);
      return (input) => verifyStandardWebhooks(keys, input);
    }
    case 'hmac':
      return (input) => verifyHmac(spec, input);
  }
}
