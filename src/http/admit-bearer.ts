import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AuthLimiter } from '../auth/index.js';
import type { Clock } from '../common/clock.js';
import { RequestError } from '../common/errors.js';
import type { Log } from '../common/log.js';
import { sendError } from './send-response.js';

/** What a route guarded by a bearer token shares with the hooks: the limiter and the client's address. */
export interface BearerGuard {
  limiter: AuthLimiter;
  clientAddress: (socketAddress: string | undefined, forwardedFor: string | string[] | undefined) => string;
  clock: Clock;
  log: Log;
}

/** The bearer token of `Authorization`, the one carrier scrape configs and MCP clients set. */
function bearerToken(req: IncomingMessage): string | undefined {
  return /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '')?.[1];
}

/**
 * Admits a request carrying the right bearer token; otherwise answers it: 429 while its client is
 * locked out (the token not looked at), else `refuse` for a missing or wrong token, counted on the
 * hooks' limiter, so guessing this token locks a client out like guessing the hook token. `false`
 * when it answered.
 */
export function admitBearer(
  guard: BearerGuard,
  req: IncomingMessage,
  res: ServerResponse,
  o: { verify: ((token: string | undefined) => boolean) | null; refuse: RequestError; surface: string },
): boolean {
  const client = guard.clientAddress(req.socket.remoteAddress, req.headers['x-forwarded-for']);
  const now = guard.clock.now();
  const lock = guard.limiter.check(client, now);
  if (lock.locked) {
    sendError(req, res, new RequestError('rate_limited', { retryAfterSeconds: lock.retryAfterSeconds }));
    return false;
  }
  if (o.verify?.(bearerToken(req))) return true;
  const after = guard.limiter.recordFailure(client, now);
  if (after.locked)
    guard.log.warn('auth lockout started', { client, retryAfterSeconds: after.retryAfterSeconds, surface: o.surface });
  sendError(req, res, o.refuse);
  return false;
}
