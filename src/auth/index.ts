/** Authentication: token carriers, constant-time comparison, brute-force lockout. */
export { extractToken } from './extract-token.js';
export { createTokenVerifier } from './create-token-verifier.js';
export { createAuthLimiter } from './create-auth-limiter.js';
export type { AuthLimiter, LimiterState } from './create-auth-limiter.js';
export { groupAuthLimiter } from './group-auth-limiter.js';
export { createSharedAuthLimiter, type SharedAuthLimiter } from './create-shared-auth-limiter.js';
export {
  createSignatureGate,
  createSignatureVerifier,
  DEFAULT_TOLERANCE_SECONDS,
  signRequest,
} from './signatures/index.js';
export type {
  GateResult,
  SignatureCandidate,
  SignatureGate,
  SignedBy,
  VerifyInput,
  VerifyResult,
} from './signatures/index.js';
