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

/** The longest path or hook name an access line and a request record keep (a request line may be 16 KB). */
export const MAX_LOGGED_PATH = 1024;

/** `text` cut to `MAX_LOGGED_PATH` characters, marked with `…` where it was cut. */
export const clipLogged = (text: string): string =>
  text.length <= MAX_LOGGED_PATH ? text : `${text.slice(0, MAX_LOGGED_PATH)}…`;

/** Writes the one `info` line of a request whose response is done (`status` null: the client left first). */
export function logAccess(log: Log, entry: AccessEntry, status: number | null, ms: number): void {
  log.info('hook request', {
    method: entry.method,
    path: entry.path,
    hook: entry.hook,
    client: entry.client,
    status,
    code: status !== null || entry.code !== null ? entry.code : 'client_gone',
    ms: Math.max(0, ms),
    ...(entry.eventId === undefined ? {} : { eventId: entry.eventId }),
    ...(entry.runId === undefined ? {} : { runId: entry.runId }),
  });
}
