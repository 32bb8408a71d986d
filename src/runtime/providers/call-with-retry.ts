import type { Log } from '../../common/log.js';
import { ProviderError, type CompletionRequest, type CompletionResult, type ModelProvider } from './model-provider.js';
import { providerRetryDelayMs } from './provider-retry-delay.js';

export interface RetryDeps {
  now: () => number;
  sleep: (ms: number, signal: AbortSignal) => Promise<void>;
  random: () => number;
  /** Where each retry is announced (`warn`, with the attempt and the wait). */
  log?: Log;
  /** Sees each failure that is retried (the run keeps the last, to say why it ran out of time). */
  onRetried?: (error: ProviderError) => void;
}

/**
 * Calls the provider, retrying transient failures (429, 5xx, timeouts, resets) with backoff that
 * honours `Retry-After`, for as long as the deadline leaves room for the wait. A refused or
 * unresolved host gets a few quick tries only; TLS failures, 401/403/404 and other 4xx fail at
 * once. The last error is thrown as it is, or, when the quick tries ran out, with their count.
 */
export async function callWithRetry(
  provider: ModelProvider,
  request: CompletionRequest,
  deadlineMs: number,
  deps: RetryDeps,
): Promise<CompletionResult> {
  const tries = new Map<string, number>();
  for (let attempt = 1; ; attempt++) {
    try {
      return await provider.complete(request);
    } catch (error) {
      if (!(error instanceof ProviderError) || request.signal.aborted) throw error;
      const kind = error.network ?? `http ${error.status ?? ''}`;
      const triesOfKind = (tries.get(kind) ?? 0) + 1;
      tries.set(kind, triesOfKind);
      const delay = providerRetryDelayMs(error, attempt, triesOfKind, deps.random);
      if (delay === null) throw error.retryable ? gaveUp(error, triesOfKind) : error;
      if (deps.now() + delay >= deadlineMs) throw error;
      deps.log?.warn('model call failed; will retry', {
        model: request.model,
        attempt,
        waitMs: delay,
        status: error.status ?? null,
        error: error.message,
      });
      deps.onRetried?.(error);
      await deps.sleep(delay, request.signal);
    }
  }
}

/** The same failure, saying it was tried more than once and is not retried further. */
function gaveUp(error: ProviderError, tries: number): ProviderError {
  return new ProviderError(`${error.message} (gave up after ${tries} attempts)`, {
    retryable: false,
    ...(error.status === undefined ? {} : { status: error.status }),
    ...(error.network === undefined ? {} : { network: error.network }),
    cause: error,
  });
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
