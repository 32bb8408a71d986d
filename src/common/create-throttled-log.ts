import type { Log, LogFields } from './log.js';

/**
 * A log line that is written at most once per `intervalMs`: the first occurrence at once, then one
 * line per interval carrying how many occurrences it stands for (`suppressed`). For failures that
 * repeat per request while they last (a store that cannot write), so an outage is a few lines a
 * minute instead of one stack per request.
 */
export function createThrottledLog(
  log: Log,
  level: 'warn' | 'error',
  msg: string,
  options: { intervalMs: number; now: () => number },
): (fields?: LogFields) => void {
  let lastAt = Number.NEGATIVE_INFINITY;
  let suppressed = 0;
  return (fields = {}) => {
    const now = options.now();
    if (now - lastAt < options.intervalMs) {
      suppressed++;
      return;
    }
    lastAt = now;
    log[level](msg, { ...fields, suppressed });
    suppressed = 0;
  };
}
