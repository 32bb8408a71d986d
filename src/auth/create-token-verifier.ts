import { timingSafeEqual } from 'node:crypto';

/**
 * Returns a predicate that compares a candidate with the expected token in constant time: the
 * candidate is copied into a buffer of the expected token's length (cut or zero-padded) and
 * compared whole, so the comparison takes the same time whatever the candidate holds and a common
 * prefix does not leak. A candidate of another length is refused after the same comparison.
 * An empty expected token matches nothing. (Hashing both sides first costs several times as much,
 * on every request.)
 */
export function createTokenVerifier(expected: string): (candidate: string | undefined) => boolean {
  const want = Buffer.from(expected, 'utf8');
  // One request at a time reaches this synchronous function, so one scratch buffer serves them all.
  const got = Buffer.alloc(want.length);
  return (candidate) => {
    const text = candidate ?? '';
    const written = got.write(text, 'utf8');
    got.fill(0, written);
    // Compare even when the token is missing or of another length, so those cost the same as a wrong one.
    const same = timingSafeEqual(got, want);
    return same && want.length > 0 && candidate !== undefined && Buffer.byteLength(text, 'utf8') === want.length;
  };
}
