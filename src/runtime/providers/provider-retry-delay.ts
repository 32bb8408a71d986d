import { computeRetryDelayMs } from '../../common/retry.js';
import type { NetworkFailure } from './classify-network-error.js';
import type { ProviderError } from './model-provider.js';

/**
 * Failures that rarely heal on their own get a few quick tries, not the run's whole deadline: a
 * model base URL that refuses connections or does not resolve would otherwise hold a run slot for
 * `timeoutSeconds` (600 s by default). Three refused tries take well under 2 s.
 */
const QUICK_TRIES: Partial<Record<NetworkFailure, number>> = { dns: 2, refused: 3 };
const QUICK_BACKOFF = { baseMs: 250, maxMs: 1000 };

/**
 * Delay before the next attempt after `error`, or `null` to give up now. `triesOfKind` counts the
 * failed attempts of this call that failed the same way (this one included). Pure: the caller
 * checks the deadline and sleeps.
 */
export function providerRetryDelayMs(
  error: ProviderError,
  attempt: number,
  triesOfKind: number,
  random: () => number,
): number | null {
  if (!error.retryable) return null;
  const quick = error.network === undefined ? undefined : QUICK_TRIES[error.network];
  if (quick === undefined) return computeRetryDelayMs(attempt, error.retryAfterMs, random);
  if (triesOfKind >= quick) return null;
  return computeRetryDelayMs(triesOfKind, undefined, random, QUICK_BACKOFF);
}
