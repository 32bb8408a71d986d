import { RUN_STATES, type RunCounts } from '../store/index.js';

/** `Runs by state: queued 2, running 1, succeeded 40, failed 3, timed_out 0 (46 in all)`. */
export function runCountsLine(counts: RunCounts): string {
  const total = RUN_STATES.reduce((sum, s) => sum + counts[s], 0);
  return `Runs by state: ${RUN_STATES.map((s) => `${s} ${counts[s]}`).join(', ')} (${total} in all)`;
}
