import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AuthLimiter } from '../auth/index.js';
import { createTokenVerifier } from '../auth/index.js';
import type { Clock } from '../common/clock.js';
import { RequestError } from '../common/errors.js';
import type { Log } from '../common/log.js';
import { sendError, sendJson, type RequestHandler } from '../http/index.js';
import type { AdminAnswer, AdminCall } from './create-admin-api.js';
import type { AdminAsset } from './read-admin-assets.js';

interface AdminHandlerDeps {
  api: (call: AdminCall) => Promise<AdminAnswer>;
  /** `gateway.auth.token`; without it the API answers 404 `admin_disabled`. */
  token: string | undefined;
  /** The hooks' auth limiter: a client guessing the gateway token is locked out like one guessing the hook token. */
  limiter: AuthLimiter;
  clientAddress: (socketAddress: string | undefined, forwardedFor: string | string[] | undefined) => string;
  clock: Clock;
  log: Log;
  /** The dashboard's files; `null` when they could not be read (the API still works). */
  assets: Map<string, AdminAsset> | null;
}

const API_PREFIX = '/admin/api';
const NO_STORE = { 'cache-control': 'no-store' };
// The page loads nothing but its own files and talks only to its own origin.
const PAGE_HEADERS = {
  'cache-control': 'no-cache',
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
};

function bearer(req: IncomingMessage): string | undefined {
  const header = req.headers.authorization;
  if (header === undefined) return undefined;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return m?.[1];
}

/**
 * The `node:http` side of `/admin`: the dashboard's static files (no auth: they hold no data) and
 * `/admin/api/*` behind `Authorization: Bearer <gateway.auth.token>` (never the hook token).
 */
export function createAdminHandler(deps: AdminHandlerDeps): RequestHandler {
  const verify = deps.token === undefined ? null : createTokenVerifier(deps.token);

  const serveAsset = (req: IncomingMessage, res: ServerResponse, name: string): void => {
    const asset = deps.assets?.get(name);
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      sendError(
        req,
        res,
        new RequestError('method_not_allowed', { message: 'Only GET is accepted for dashboard files.' }),
      );
      return;
    }
    if (asset === undefined) {
      sendError(
        req,
        res,
        new RequestError('not_found', {
          message:
            deps.assets === null ? 'The dashboard files are missing from this installation.' : 'No such endpoint.',
        }),
      );
      return;
    }
    res.writeHead(200, { 'content-type': asset.contentType, 'content-length': asset.body.length, ...PAGE_HEADERS });
    res.end(req.method === 'HEAD' ? undefined : asset.body);
  };

  const serveApi = async (req: IncomingMessage, res: ServerResponse, path: string, query: string): Promise<void> => {
    // The API takes no request bodies; whatever is sent is read and dropped.
    req.resume();
    try {
      if (verify === null) throw new RequestError('admin_disabled');
      const client = deps.clientAddress(req.socket.remoteAddress, req.headers['x-forwarded-for']);
      const now = deps.clock.now();
      const lock = deps.limiter.check(client, now);
      if (lock.locked) throw new RequestError('rate_limited', { retryAfterSeconds: lock.retryAfterSeconds });
      if (!verify(bearer(req))) {
        const after = deps.limiter.recordFailure(client, now);
        if (after.locked)
          deps.log.warn('auth lockout started', {
            client,
            retryAfterSeconds: after.retryAfterSeconds,
            surface: 'admin',
          });
        throw new RequestError('admin_unauthorized');
      }
      const answer = await deps.api({
        method: req.method ?? '',
        path: path.slice(API_PREFIX.length),
        query: new URLSearchParams(query),
        client,
      });
      sendJson(res, answer.status, JSON.stringify(answer.body), NO_STORE);
    } catch (error) {
      if (error instanceof RequestError) {
        sendError(req, res, error);
        return;
      }
      if (error instanceof URIError) {
        sendError(req, res, new RequestError('not_found'));
        return;
      }
      deps.log.error('admin request failed', { err: error, path });
      sendError(req, res, new RequestError('internal_error'));
    }
  };

  return (req, res) => {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q === -1 ? url : url.slice(0, q);
    if (path === API_PREFIX || path.startsWith(`${API_PREFIX}/`)) {
      void serveApi(req, res, path, q === -1 ? '' : url.slice(q + 1));
      return;
    }
    const name = path === '/admin' ? '' : path.slice('/admin/'.length);
    serveAsset(req, res, name);
  };
}
