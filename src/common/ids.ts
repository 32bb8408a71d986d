import { randomBytes } from 'node:crypto';

/** Generates ids. Injected so tests can be deterministic. */
export interface Ids {
  /** A UUIDv7: time-ordered, so store inserts append to the index instead of splitting pages. */
  next(): string;
}

const POOL_BYTES = 16 * 512;
/** The ASCII codes of the hex digits. */
const DIGITS = Buffer.from('0123456789abcdef', 'latin1');

/** Writes `value`'s lowest `count` hex digits into `out` from `at`. */
function writeHex(out: Buffer, at: number, value: number, count: number): void {
  for (let i = at + count - 1; i >= at; i--) {
    out[i] = DIGITS[value & 0xf]!;
    value >>>= 4;
  }
}

/**
 * Creates a UUIDv7 generator (RFC 9562 §5.7) that is monotonic within one process: ids made in the
 * same millisecond use a 12-bit counter in `rand_a` (method 1 of §6.2), so they still sort in the
 * order they were made. Random bytes come from a pooled CSPRNG buffer. The id is written as ASCII
 * into a buffer and read out as one flat string: built by concatenation it would be a tree of
 * pieces that every write of it (to SQLite, into JSON) flattens first.
 */
export function createIds(now: () => number = Date.now): Ids {
  let pool = randomBytes(POOL_BYTES);
  let offset = 0;
  let lastMs = -1;
  let counter = 0;
  const out = Buffer.from('00000000-0000-7000-8000-000000000000', 'latin1');
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
      // unix_ts_ms (48 bits) as 4 + 4 - 4 digits, then the version and the counter, then the
      // variant (10) and 62 random bits.
      const lo = ms >>> 0;
      writeHex(out, 0, Math.floor(ms / 0x100000000), 4);
      writeHex(out, 4, lo >>> 16, 4);
      writeHex(out, 9, lo, 4);
      writeHex(out, 14, 0x7000 | counter, 4);
      writeHex(out, 19, ((0x80 | (r[o]! & 0x3f)) << 8) | r[o + 1]!, 4);
      writeHex(out, 24, (r[o + 2]! << 8) | r[o + 3]!, 4);
      writeHex(out, 28, (r[o + 4]! << 8) | r[o + 5]!, 4);
      writeHex(out, 32, (r[o + 6]! << 8) | r[o + 7]!, 4);
      return out.toString('latin1');
    },
  };
}

/** A fresh random secret, URL-safe, 32 bytes of entropy. */
export function generateToken(): string {
  return randomBytes(32).toString('base64url');
}
