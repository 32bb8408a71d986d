import type { Clock } from '../../src/common/clock.js';

interface Sleeper {
  at: number;
  resolve: () => void;
}

/** A clock that moves only when the test says so; sleepers wake as `advance` passes their time. */
export interface ManualClock extends Clock {
  /** Moves time forward, waking every sleeper that falls due, in order, letting each run its continuation. */
  advance(ms: number): Promise<void>;
  /** Sleepers waiting now. */
  sleepers(): number;
}

const settle = async (): Promise<void> => {
  for (let i = 0; i < 20; i++) await new Promise<void>((r) => setImmediate(r));
};

export function createManualClock(start = 1_700_000_000_000): ManualClock {
  let now = start;
  const sleepers = new Set<Sleeper>();
  return {
    now: () => now,
    sleep(ms, signal) {
      return new Promise<void>((resolve, reject) => {
        const s: Sleeper = { at: now + Math.max(0, ms), resolve };
        const onAbort = (): void => {
          sleepers.delete(s);
          reject(signal?.reason ?? new Error('aborted'));
        };
        if (signal?.aborted) return onAbort();
        s.resolve = () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        };
        signal?.addEventListener('abort', onAbort, { once: true });
        sleepers.add(s);
      });
    },
    async advance(ms) {
      const target = now + ms;
      await settle();
      for (;;) {
        const due = [...sleepers].filter((s) => s.at <= target).sort((a, b) => a.at - b.at)[0];
        if (due === undefined) break;
        now = Math.max(now, due.at);
        sleepers.delete(due);
        due.resolve();
        await settle();
      }
      now = target;
      await settle();
    },
    sleepers: () => sleepers.size,
  };
}
