/** Authentication: token carriers, constant-time comparison, brute-force lockout. */
export { extractToken } from './extract-token.js';
export { createTokenVerifier } from './create-token-verifier.js';
export { createAuthLimiter } from './create-auth-limiter.js';
export type { AuthLimiter } from './create-auth-limiter.js';
export { groupAuthLimiter } from './group-auth-limiter.js';
export { createSharedAuthLimiter, type SharedAuthLimiter } from './create-shared-auth-limiter.js';
export {
  createSignatureGate,
  signRequest,
} from './signatures/index.js';
export type {
  SignatureCandidate,
  SignatureGate,
  SignedBy,
} from './signatures/index.js';
