import type { Log } from '../../common/log.js';
import { computeRetryDelayMs } from '../../common/retry.js';
import { ProviderError, type CompletionRequest, type CompletionResult, type ModelProvider } from './model-provider.js';

export interface RetryDeps {
  now: () => number;
  sleep: (ms: number, signal: AbortSignal) => Promise<void>;
  random: () => number;
  /** Where each retry is announced (`warn`, with the attempt and the wait). */
  log?: Log;
}

/**
 * Calls the provider, retrying retryable failures (network, 429, 5xx) with backoff that honours
 * `Retry-After`, for as long as the deadline leaves room for the wait. Other failures, and the
 * last retryable one, are thrown as they are.
 */
export async function callWithRetry(
  provider: ModelProvider,
  request: CompletionRequest,
  deadlineMs: number,
  deps: RetryDeps,
): Promise<CompletionResult> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await provider.complete(request);
    } catch (error) {
      if (!(error instanceof ProviderError) || !error.retryable || request.signal.aborted) throw error;
      const delay = computeRetryDelayMs(attempt, error.retryAfterMs, deps.random);
      if (deps.now() + delay >= deadlineMs) throw error;
      deps.log?.warn('model call failed; will retry', {
        model: request.model, attempt, waitMs: delay, status: error.status ?? null, error: error.message,
      });
      await deps.sleep(delay, request.signal);
    }
  }
}

/** A sleep that ends early (rejecting) when the signal aborts. */
export function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
