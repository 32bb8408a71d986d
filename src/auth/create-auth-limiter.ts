import type { AuthRateLimitConfig } from '../config/index.js';

/** Outcome of asking whether a client may try to authenticate. */
export type LimiterState = { locked: false } | { locked: true; retryAfterSeconds: number };

/** Per-client-address accounting of failed authentication attempts. */
export interface AuthLimiter {
  /** Whether `client` is locked out at `nowMs`. Called before the token is looked at. */
  check(client: string, nowMs: number): LimiterState;
  /** Counts one failure; returns the lockout it started, if any. */
  recordFailure(client: string, nowMs: number): LimiterState;
  /** Clients currently tracked (bounded by `maxClients`). */
  size(): number;
}

interface Entry {
  /** Failure times in the current window, oldest first; never longer than `maxFailures`. */
  failures: number[];
  lockedUntil: number;
}

/**
 * Sliding-window failure counter with a lockout. Memory is bounded: at most `maxClients` entries,
 * the least recently touched one forgotten first (a Map keeps insertion order; touching re-inserts).
 */
export function createAuthLimiter(options: AuthRateLimitConfig): AuthLimiter {
  const windowMs = options.windowSeconds * 1000;
  const lockoutMs = options.lockoutSeconds * 1000;
  const entries = new Map<string, Entry>();

  const touch = (client: string, entry: Entry): void => {
    entries.delete(client);
    entries.set(client, entry);
    if (entries.size > options.maxClients) {
      const oldest = entries.keys().next();
      if (oldest.done !== true) entries.delete(oldest.value);
    }
  };

  const lockedState = (entry: Entry, nowMs: number): LimiterState =>
    entry.lockedUntil > nowMs
      ? { locked: true, retryAfterSeconds: Math.max(1, Math.ceil((entry.lockedUntil - nowMs) / 1000)) }
      : { locked: false };

  return {
    check(client, nowMs) {
      const entry = entries.get(client);
      if (entry === undefined) return { locked: false };
      const state = lockedState(entry, nowMs);
      if (!state.locked && entry.lockedUntil !== 0) {
        // The lockout is over: start from a clean window.
        entry.lockedUntil = 0;
        entry.failures.length = 0;
      }
      return state;
    },
    recordFailure(client, nowMs) {
      const entry = entries.get(client) ?? { failures: [], lockedUntil: 0 };
      const horizon = nowMs - windowMs;
      while (entry.failures.length > 0 && entry.failures[0]! <= horizon) entry.failures.shift();
      entry.failures.push(nowMs);
      if (entry.failures.length >= options.maxFailures) {
        entry.lockedUntil = nowMs + lockoutMs;
        entry.failures.length = 0;
      }
      touch(client, entry);
      return lockedState(entry, nowMs);
    },
    size: () => entries.size,
  };
}
