import type { Clock } from './clock.js';

interface RetryWhileOptions {
  clock: Clock;
  /** Whether a failure may heal by waiting (the store cannot write for the moment). */
  retryable(error: unknown): boolean;
  /** How long to go on trying, from the first try. */
  forMs: number;
  /** The first pause; each next one doubles, up to `maxDelayMs`. @default 100 */
  firstDelayMs?: number;
  /** @default 1000 */
  maxDelayMs?: number;
}

/**
 * Calls `fn` until it succeeds, pausing between tries while its failures are `retryable` and
 * `forMs` has not run out; then throws the last failure. For a write that records what was
 * already done (a reply a chat service accepted, a run's paid outcome): a database gone for a
 * moment must not make the gateway do it again.
 */
export async function retryWhile<T>(fn: () => Promise<T>, o: RetryWhileOptions): Promise<T> {
  const deadline = o.clock.now() + o.forMs;
  let pauseMs = o.firstDelayMs ?? 100;
  for (;;) {
    try {
      return await fn();
    } catch (error) {
      if (!o.retryable(error) || o.clock.now() + pauseMs > deadline) throw error;
    }
    await o.clock.sleep(pauseMs);
    pauseMs = Math.min(pauseMs * 2, o.maxDelayMs ?? 1000);
  }
}
