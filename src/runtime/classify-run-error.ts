import { ProviderError } from './providers/model-provider.js';
import { TurnTimeoutError } from './call-model-turn.js';

/**
 * Why a run failed, in words an operator can filter on: who must act (fix a key, wait for the
 * service, fix the config) matters more than the exception's class.
 */
export type RunErrorCategory =
  | 'timeout'
  | 'provider_auth'
  | 'provider_rate_limited'
  | 'provider_unavailable'
  | 'provider_rejected'
  | 'network'
  | 'config'
  /** The process running it died, `maxAttempts` times. */
  | 'interrupted'
  | 'internal';

/** @returns the category of a run's failure; `internal` for anything unforeseen. */
export function classifyRunError(error: unknown): RunErrorCategory {
  if (error instanceof TurnTimeoutError) return 'timeout';
  if (error instanceof ProviderError) {
    const s = error.status;
    if (s === 401 || s === 403) return 'provider_auth';
    if (s === 429) return 'provider_rate_limited';
    if (s !== undefined && s >= 500) return 'provider_unavailable';
    // No status: the call never got an answer (network), or never started (no such model or provider).
    if (s === undefined) return error.retryable ? 'network' : 'config';
    return 'provider_rejected';
  }
  return 'internal';
}
