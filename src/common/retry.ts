/** Retry timing as pure functions of (attempt, hint, random): backoff, jitter, `Retry-After`. */

interface BackoffOptions {
  /** Delay before the second attempt. @default 500 */
  baseMs?: number;
  /** Cap on any computed delay. @default 30000 */
  maxMs?: number;
}

/**
 * Delay before attempt `attempt + 1` after `attempt` failed (attempt counts from 1).
 * A server hint (`retryAfterMs`) wins when present; otherwise exponential backoff with "equal
 * jitter": half the step fixed, half random, so retries from many clients spread out.
 */
export function computeRetryDelayMs(
  attempt: number,
  retryAfterMs: number | undefined,
  random: () => number,
  options: BackoffOptions = {},
): number {
  const maxMs = options.maxMs ?? 30_000;
  if (retryAfterMs !== undefined && retryAfterMs >= 0) return retryAfterMs;
  const step = Math.min(maxMs, (options.baseMs ?? 500) * 2 ** Math.max(0, attempt - 1));
  return Math.round(step / 2 + (step / 2) * random());
}

/**
 * Parses a `Retry-After` header: delta-seconds or an HTTP-date. Returns milliseconds from `nowMs`,
 * or `undefined` when absent or unreadable.
 */
export function parseRetryAfterMs(header: string | null | undefined, nowMs: number): number | undefined {
  if (header === null || header === undefined) return undefined;
  const value = header.trim();
  if (/^\d+(\.\d+)?$/.test(value)) return Math.round(Number(value) * 1000);
  const at = Date.parse(value);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - nowMs);
}
