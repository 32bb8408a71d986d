/** Provider signatures checked over the raw body: GitHub, Stripe, Slack, Standard Webhooks, generic HMAC. */
export { createSignatureGate } from './create-signature-gate.js';
export type { SignatureCandidate, SignatureGate, SignedBy } from './create-signature-gate.js';
export { signRequest } from './sign-request.js';
