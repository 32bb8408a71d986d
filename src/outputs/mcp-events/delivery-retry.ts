import { computeRetryDelayMs } from '../../common/retry.js';

/**
 * Delay before the next try at a delivery after `attempt` failures: 100 ms doubling to 5 minutes,
 * with jitter, or the callback's `Retry-After` (at most an hour). Short at first because the first
 * refusals are usually a subscriber still storing the subscribe answer (503 while activating); at
 * most 5 minutes so a subscriber that was down for an hour has its backlog within minutes of
 * coming back.
 */
export function deliveryRetryDelayMs(attempt: number, retryAfterMs: number | undefined, random: () => number): number {
  const hint = retryAfterMs === undefined ? undefined : Math.min(retryAfterMs, 3_600_000);
  return computeRetryDelayMs(attempt, hint, random, { baseMs: 100, maxMs: 300_000 });
}
