import type { Clock } from '../../common/clock.js';

/** Wakes idle senders when occurrences were committed: a generation count, so no announcement is missed. */
export interface Wakeup {
  /** The announcements so far; read before looking at the log. */
  generation(): number;
  /** Occurrences were committed. */
  notify(): void;
  /**
   * Resolves once there was an announcement after `since` (at once if there already was), `ms`
   * have passed on the clock, or a signal aborts.
   */
  wait(since: number, ms: number, signals: readonly AbortSignal[]): Promise<void>;
}

export function createWakeup(clock: Clock): Wakeup {
  let generation = 0;
  const waiting = new Set<() => void>();
  return {
    generation: () => generation,
    notify() {
      generation++;
      for (const wake of [...waiting]) wake();
    },
    wait(since, ms, signals) {
      if (since !== generation || signals.some((s) => s.aborted)) return Promise.resolve();
      return new Promise<void>((resolve) => {
        const timer = new AbortController();
        const wake = (): void => {
          waiting.delete(wake);
          for (const s of signals) s.removeEventListener('abort', wake);
          timer.abort();
          resolve();
        };
        waiting.add(wake);
        for (const s of signals) s.addEventListener('abort', wake, { once: true });
        clock.sleep(ms, timer.signal).then(wake, () => undefined);
      });
    },
  };
}
