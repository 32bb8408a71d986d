import type { Clock } from './clock.js';

/**
 * Calls `fn` every `ms` on the injected clock until `signal` aborts (waiting for each call before
 * sleeping again, so calls never overlap). Resolves once stopped.
 */
export async function repeatEvery(
  clock: Clock,
  ms: number,
  signal: AbortSignal,
  fn: () => Promise<unknown> | unknown,
): Promise<void> {
  while (!signal.aborted) {
    try {
      await clock.sleep(ms, signal);
    } catch {
      return;
    }
    await fn();
  }
}
