import type { Store } from '../store/index.js';
import type { GatewayMetrics } from './create-metrics.js';

/**
 * The same store, telling the metrics what the workers record through it: each run's terminal
 * state with its time since this process claimed it, and each delivery attempt's channel and
 * outcome. Only writes the store accepted (current claims) count, so nothing counts twice.
 */
export function observeStore(
  store: Store,
  metrics: Pick<GatewayMetrics, 'runFinished' | 'deliveryAttempt'>,
  now: () => number,
): Store {
  /** Claim time of the runs this process holds; an entry leaves when its run is finished or handed back. */
  const claimedAt = new Map<string, number>();
  return {
    ...store,
    async claimRuns(options) {
      const runs = await store.claimRuns(options);
      const at = now();
      for (const r of runs) claimedAt.set(r.id, at);
      return runs;
    },
    async releaseRun(claim) {
      claimedAt.delete(claim.id);
      return store.releaseRun(claim);
    },
    async completeRun(completion) {
      const at = claimedAt.get(completion.runId);
      try {
        const recorded = await store.completeRun(completion);
        if (recorded) metrics.runFinished(completion.state, at === undefined ? null : Math.max(0, now() - at) / 1000);
        return recorded;
      } finally {
        claimedAt.delete(completion.runId);
      }
    },
    async recordDeliveryAttempt(result) {
      const recorded = await store.recordDeliveryAttempt(result);
      if (recorded) metrics.deliveryAttempt(result.resolvedChannel ?? 'none', result.outcome);
      return recorded;
    },
  };
}
