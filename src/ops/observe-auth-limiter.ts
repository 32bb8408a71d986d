import type { AuthLimiter } from '../auth/index.js';
import type { GatewayMetrics } from './create-metrics.js';

/**
 * The same limiter, counting each failure and each lockout it starts (a failure that leaves the
 * client locked: a locked client is refused before its credentials are looked at).
 */
export function observeAuthLimiter<L extends AuthLimiter>(
  limiter: L,
  metrics: Pick<GatewayMetrics, 'authFailure' | 'lockout'>,
): L {
  return {
    ...limiter,
    recordFailure(client: string, nowMs: number) {
      const state = limiter.recordFailure(client, nowMs);
      metrics.authFailure();
      if (state.locked) metrics.lockout();
      return state;
    },
  };
}
