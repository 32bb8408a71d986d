/**
 * Holds back a storm of identical lines: the first of a kind passes, the rest within
 * `intervalMs` are only counted, and each interval that held some back ends in one summary.
 */
type RepeatDecision = { kind: 'pass' } | { kind: 'drop' } | { kind: 'summary'; count: number };

/** A summary owed for a window that closed with lines held back. */
interface RepeatSummary {
  key: string;
  count: number;
}

export interface RepeatLimiter {
  /** Decides for one line of kind `key` at `now`. */
  take(key: string, now: number): RepeatDecision;
  /** Summaries of windows closed by `now` (all of them when `now` is omitted), forgetting those kinds. */
  drain(now?: number): RepeatSummary[];
}

interface Window {
  startedAt: number;
  held: number;
}

/** Kinds tracked at once; past this the oldest window is summarised early. @default 1000 */
const MAX_REPEAT_KINDS = 1_000;

export function createRepeatLimiter(options: { intervalMs: number; maxKinds?: number }): RepeatLimiter {
  const { intervalMs } = options;
  const maxKinds = options.maxKinds ?? MAX_REPEAT_KINDS;
  const windows = new Map<string, Window>();
  const overflow: RepeatSummary[] = [];

  return {
    take(key, now) {
      const w = windows.get(key);
      if (w === undefined) {
        if (windows.size >= maxKinds) {
          // Map order is insertion order: the first entry is the oldest window.
          const [oldKey, old] = windows.entries().next().value as [string, Window];
          windows.delete(oldKey);
          if (old.held > 0) overflow.push({ key: oldKey, count: old.held });
        }
        windows.set(key, { startedAt: now, held: 0 });
        return { kind: 'pass' };
      }
      if (now - w.startedAt < intervalMs) {
        w.held += 1;
        return { kind: 'drop' };
      }
      // A new window starts with this line; it stands for itself and what the last one held.
      const count = w.held + 1;
      windows.delete(key);
      windows.set(key, { startedAt: now, held: 0 });
      return count === 1 ? { kind: 'pass' } : { kind: 'summary', count };
    },
    drain(now) {
      const out = overflow.splice(0);
      for (const [key, w] of windows) {
        if (now !== undefined && now - w.startedAt < intervalMs) continue;
        windows.delete(key);
        if (w.held > 0) out.push({ key, count: w.held });
      }
      return out;
    },
  };
}
