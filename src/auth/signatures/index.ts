/** Provider signatures checked over the raw body: GitHub, Stripe, Slack, Standard Webhooks, generic HMAC. */
export { createSignatureGate } from './create-signature-gate.js';
export type { GateResult, SignatureCandidate, SignatureGate, SignedBy } from './create-signature-gate.js';
export { createSignatureVerifier } from './verify-signature.js';
export { signRequest } from './sign-request.js';
export type { SignatureVerifier } from './verify-signature.js';
export { DEFAULT_TOLERANCE_SECONDS } from './verify-types.js';
export type { VerifyInput, VerifyResult } from './verify-types.js';
