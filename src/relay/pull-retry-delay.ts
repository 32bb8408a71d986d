import { computeRetryDelayMs } from '../common/retry.js';

/** The first pause after a failed pull. */
const FIRST_DELAY_MS = 1000;

/**
 * How long a home waits before its next pull after `failures` in a row: exponential backoff with
 * jitter from a second up to `maxMs`; a relay's `Retry-After` (a lockout, a store that cannot write)
 * wins, however long.
 */
export function pullRetryDelayMs(
  failures: number,
  retryAfterMs: number | undefined,
  random: () => number,
  maxMs: number,
): number {
  return computeRetryDelayMs(failures, retryAfterMs, random, { baseMs: FIRST_DELAY_MS, maxMs });
}
