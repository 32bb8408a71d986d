import { randomBytes } from 'node:crypto';

/** Generates ids. Injected so tests can be deterministic. */
export interface Ids {
  /** A UUIDv7: time-ordered, so store inserts append to the index instead of splitting pages. */
  next(): string;
}

const POOL_BYTES = 16 * 512;
const HEX: string[] = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

/**
 * Creates a UUIDv7 generator (RFC 9562 §5.7) that is monotonic within one process: ids made in the
 * same millisecond use a 12-bit counter in `rand_a` (method 1 of §6.2), so they still sort in the
 * order they were made. Random bytes come from a pooled CSPRNG buffer.
 */
export function createIds(now: () => number = Date.now): Ids {
  let pool = randomBytes(POOL_BYTES);
  let offset = 0;
  let lastMs = -1;
  let counter = 0;
  return {
    next(): string {
      let ms = now();
      if (ms <= lastMs) {
        ms = lastMs;
        counter++;
        if (counter > 0xfff) {
          // Counter exhausted within one millisecond: borrow the next millisecond.
          ms = lastMs + 1;
          counter = 0;
        }
      } else {
        counter = 0;
      }
      lastMs = ms;
      if (offset + 8 > POOL_BYTES) {
        pool = randomBytes(POOL_BYTES);
        offset = 0;
      }
      const r = pool;
      const o = offset;
      offset += 8;
      const hi = Math.floor(ms / 0x100000000);
      const lo = ms >>> 0;
      const t =
        (hi >>> 8).toString(16).padStart(2, '0') +
        HEX[hi & 0xff]! +
        lo.toString(16).padStart(8, '0');
      const a = 0x7000 | counter;
      return (
        t.slice(0, 8) + '-' + t.slice(8, 12) + '-' + a.toString(16) + '-' +
        HEX[0x80 | (r[o]! & 0x3f)]! + HEX[r[o + 1]!]! + '-' +
        HEX[r[o + 2]!]! + HEX[r[o + 3]!]! + HEX[r[o + 4]!]! + HEX[r[o + 5]!]! + HEX[r[o + 6]!]! + HEX[r[o + 7]!]!
      );
    },
  };
}

/** A fresh random secret, URL-safe, 32 bytes of entropy. */
export function generateToken(): string {
  return randomBytes(32).toString('base64url');
}
