import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * Returns a predicate that compares a candidate with the expected token in constant time.
 * Both sides are hashed first so neither the length nor a common prefix leaks through timing.
 */
export function createTokenVerifier(expected: string): (candidate: string | undefined) => boolean {
  const want = createHash('sha256').update(expected, 'utf8').digest();
  return (candidate) => {
    const got = createHash('sha256').update(candidate ?? '', 'utf8').digest();
    // Compare even when the token is missing, so a missing token costs the same as a wrong one.
    return timingSafeEqual(got, want) && candidate !== undefined;
  };
}
