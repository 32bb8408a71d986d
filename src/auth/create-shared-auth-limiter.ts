import type { Clock } from '../common/clock.js';
import type { Log } from '../common/log.js';
import { repeatEvery } from '../common/repeat-every.js';
import type { AuthRateLimitConfig } from '../config/index.js';
import type { LockoutStore, WorkSignals } from '../store/index.js';
import type { AuthLimiter, LimiterState } from './create-auth-limiter.js';

/** Failures counted in the store at once, at most; past it a failure counts on this replica only. */
export const MAX_FAILURE_WRITES = 16;

export interface SharedAuthLimiter extends AuthLimiter {
  /** Loads the current lockouts and starts refreshing them. */
  start(): Promise<void>;
  stop(): void;
}

/**
 * The lockout for a fleet: every failure is also counted in the store, so a client's budget is
 * the same however many replicas it spreads its attempts over. The hot path stays in memory: a
 * cache of locked clients, filled by the store's lockout announcements and refreshed every
 * `refreshMs`, is checked beside this replica's own limiter.
 */
export function createSharedAuthLimiter(deps: {
  local: AuthLimiter;
  store: LockoutStore & WorkSignals;
  options: AuthRateLimitConfig;
  clock: Clock;
  log: Log;
  /** @default 1000 */
  refreshMs?: number;
}): SharedAuthLimiter {
  const { local, store, options, clock, log } = deps;
  let locks = new Map<string, number>();
  const halt = new AbortController();
  let unsubscribe = (): void => undefined;
  /** Failures being counted in the store now. */
  let writing = 0;

  const remember = (client: string, until: number): void => {
    locks.delete(client);
    locks.set(client, until);
    // As many as the local limiter keeps locked (`maxClients`); beyond it the oldest lockout goes first.
    if (locks.size > options.maxClients) locks.delete(locks.keys().next().value!);
  };
  const refresh = async (): Promise<void> => {
    try {
      const next = new Map<string, number>();
      // Ending last first: kept in the map in the order they end, oldest first, as `remember` keeps them.
      for (const l of (await store.listLockouts(options.maxClients)).reverse()) next.set(l.client, l.lockedUntil);
      locks = next;
    } catch (error) {
      log.error('refreshing shared lockouts failed', { err: error });
    }
  };
  const sharedState = (client: string, nowMs: number): LimiterState => {
    const until = locks.get(client);
    if (until === undefined || until <= nowMs) return { locked: false };
    return { locked: true, retryAfterSeconds: Math.max(1, Math.ceil((until - nowMs) / 1000)) };
  };

  return {
    check(client, nowMs) {
      const mine = local.check(client, nowMs);
      return mine.locked ? mine : sharedState(client, nowMs);
    },
    recordFailure(client, nowMs) {
      const mine = local.recordFailure(client, nowMs);
      // A flood of failures from many addresses would queue a query each in the pool the ingress
      // uses; past the bound, this replica's own count (above) is what holds them back.
      if (writing >= MAX_FAILURE_WRITES) return mine;
      writing++;
      store
        .recordAuthFailure({
          client,
          windowMs: options.windowSeconds * 1000,
          maxFailures: options.maxFailures,
          lockoutMs: options.lockoutSeconds * 1000,
        })
        .then(
          (until) => {
            if (until !== null) remember(client, until);
          },
          (error: unknown) => log.error('counting an auth failure in the store failed', { err: error }),
        )
        .finally(() => void writing--);
      return mine;
    },
    size: () => local.size() + locks.size,
    async start() {
      unsubscribe = store.subscribe((signal) => {
        if (signal.kind === 'lockout') remember(signal.client, signal.lockedUntil);
      });
      await refresh();
      void repeatEvery(clock, deps.refreshMs ?? 1000, halt.signal, refresh);
    },
    stop() {
      unsubscribe();
      halt.abort();
    },
  };
}
