import { setTimeout as delay } from 'node:timers/promises';

/** Time, injected so tests never really wait. */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Resolves after `ms`, or rejects with the signal's reason once it aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/** Node's timers take at most 2^31 - 1 ms (about 24.8 days); longer delays would fire at once. */
const MAX_TIMER_MS = 2_147_483_647;

export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: (ms, signal) =>
    delay(
      Math.min(Math.max(0, ms), MAX_TIMER_MS),
      undefined,
      signal === undefined ? { ref: false } : { signal, ref: false },
    ),
};
