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

/**
 * A background loop: `fn` now, then every `ms` after each call ends, until `signal` aborts (one loop,
 * so a call that outlasts `ms` is never joined by another). Resolves once stopped.
 */
export async function runNowAndEvery(
  clock: Clock,
  ms: number,
  signal: AbortSignal,
  fn: () => Promise<unknown> | unknown,
): Promise<void> {
  await fn();
  await repeatEvery(clock, ms, signal, fn);
}
