import type { ServerResponse } from 'node:http';
import type { Log } from '../common/log.js';

/**
 * What the access line of one request says. Never the token, the query or the body: the path is
 * logged without its query string, and nothing of the payload is kept here.
 */
export interface AccessEntry {
  method: string;
  path: string;
  /** The `<name>` after `hooks.path`, once the request got that far. */
  hook: string | null;
  client: string;
  /** The error code of a refused request; `null` when accepted. */
  code: string | null;
  eventId?: string;
  runId?: string;
}

/**
 * Writes one `info` line when the response is done (sent, or the client went away), with the
 * status actually sent and the time since `startedAt`; then hands the same status to `onAnswered`
 * (metrics), from the same listener.
 */
export function logAccessOnClose(
  res: ServerResponse, entry: AccessEntry,
  deps: { log: Log; now: () => number; startedAt: number; onAnswered?: ((hook: string | null, status: number | null) => void) | undefined },
): void {
  res.once('close', () => {
    const status = res.headersSent ? res.statusCode : null;
    deps.log.info('hook request', {
      method: entry.method,
      path: entry.path,
      hook: entry.hook,
      client: entry.client,
      status,
      code: status !== null || entry.code !== null ? entry.code : 'client_gone',
      ms: Math.max(0, deps.now() - deps.startedAt),
      ...(entry.eventId === undefined ? {} : { eventId: entry.eventId }),
      ...(entry.runId === undefined ? {} : { runId: entry.runId }),
    });
    deps.onAnswered?.(entry.hook, status);
  });
}
