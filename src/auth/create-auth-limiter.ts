import type { AuthRateLimitConfig } from '../config/index.js';

/** Outcome of asking whether a client may try to authenticate. */
export type LimiterState = { locked: false } | { locked: true; retryAfterSeconds: number };

/**
 * Per-client-address accounting of failed authentication attempts. The shape is all a caller
 * needs, so a limiter kept in a shared store can take this one's place.
 */
export interface AuthLimiter {
  /** Whether `client` is locked out at `nowMs`. Called before the token is looked at. */
  check(client: string, nowMs: number): LimiterState;
  /** Counts one failure; returns the lockout it started, if any. */
  recordFailure(client: string, nowMs: number): LimiterState;
  /** Clients currently tracked: at most `maxClients` counting failures plus `maxClients` locked. */
  size(): number;
}

/**
 * Sliding-window failure counter with a lockout, in two bounded tables. Clients still counting
 * failures live in one (least recently touched forgotten first, past `maxClients`); a client that
 * is locked moves to the other, so a flood of fresh addresses with one failure each can never push
 * a locked client out and let it straight back in. The locked table is bounded too: when it is
 * full, the lock that ends soonest goes first (locks last equally long, so that is the oldest).
 */
export function createAuthLimiter(options: AuthRateLimitConfig): AuthLimiter {
  const windowMs = options.windowSeconds * 1000;
  const lockoutMs = options.lockoutSeconds * 1000;
  /** Failure times in the current window, oldest first; never longer than `maxFailures`. */
  const counting = new Map<string, number[]>();
  /** Client → time its lockout ends; insertion order is end order. */
  const locked = new Map<string, number>();

  const lockedState = (until: number, nowMs: number): LimiterState => ({
    locked: true,
    retryAfterSeconds: Math.max(1, Math.ceil((until - nowMs) / 1000)),
  });

  const lock = (client: string, nowMs: number): number => {
    for (const [c, until] of locked) {
      if (until > nowMs && locked.size < options.maxClients) break;
      locked.delete(c);
    }
    const until = nowMs + lockoutMs;
    locked.set(client, until);
    return until;
  };

  return {
    check(client, nowMs) {
      const until = locked.get(client);
      if (until === undefined) return { locked: false };
      if (until > nowMs) return lockedState(until, nowMs);
      // The lockout is over: the client starts again from a clean window.
      locked.delete(client);
      return { locked: false };
    },
    recordFailure(client, nowMs) {
      const until = locked.get(client);
      if (until !== undefined && until > nowMs) return lockedState(until, nowMs);
      if (until !== undefined) locked.delete(client);
      const failures = counting.get(client) ?? [];
      counting.delete(client);
      const horizon = nowMs - windowMs;
      while (failures.length > 0 && failures[0]! <= horizon) failures.shift();
      failures.push(nowMs);
      if (failures.length >= options.maxFailures) return lockedState(lock(client, nowMs), nowMs);
      counting.set(client, failures);
      if (counting.size > options.maxClients) {
        const oldest = counting.keys().next();
        if (oldest.done !== true) counting.delete(oldest.value);
      }
      return { locked: false };
    },
    size: () => counting.size + locked.size,
  };
}
