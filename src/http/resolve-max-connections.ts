import { readFileSync } from 'node:fs';

/** Connections allowed when the open-file limit is high or unknown. */
const DEFAULT_MAX_CONNECTIONS = 1000;
/** File descriptors kept free for the store, logs, transform processes' pipes and outbound calls. */
const FD_MARGIN = 64;
/**
 * Connections past the limit held at once, each until its request is answered 503 or its short
 * grace ends; a newer one beyond this closes the oldest, so the excess never takes the descriptors
 * that answering it needs.
 */
export const OVER_CAPACITY_HELD = 32;

/**
 * The process's soft limit on open files, from `/proc/self/limits` (Linux), or `undefined` where
 * that is not readable. Node raises the soft limit to the hard one at startup, so this is the
 * limit the gateway actually runs with.
 */
export function readOpenFileLimit(): number | undefined {
  let text: string;
  try {
    text = readFileSync('/proc/self/limits', 'utf8');
  } catch {
    return undefined;
  }
  const m = /^Max open files\s+(\d+|unlimited)\s/m.exec(text);
  if (m === null || m[1] === 'unlimited') return undefined;
  return Number(m[1]);
}

/**
 * `gateway.maxConnections` when set; otherwise 1000, or the open-file limit minus a margin and the
 * connections held past the limit when that is lower, so connections alone can never exhaust
 * descriptors the gateway needs (an accept that fails for want of one resets the client instead of
 * answering it).
 */
export function resolveMaxConnections(configured: number | undefined, fdLimit: number | undefined): number {
  if (configured !== undefined) return configured;
  if (fdLimit === undefined) return DEFAULT_MAX_CONNECTIONS;
  return Math.max(1, Math.min(DEFAULT_MAX_CONNECTIONS, fdLimit - FD_MARGIN - OVER_CAPACITY_HELD));
}
