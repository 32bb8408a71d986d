import type { IncomingMessage, ServerResponse } from 'node:http';
import { createTokenVerifier } from '../auth/index.js';
import { RequestError } from '../common/errors.js';
import { isStoreUnavailable } from '../store/index.js';
import { admitBearer, type BearerGuard } from './admit-bearer.js';
import type { RequestHandler } from './create-request-handler.js';
import { ClientGoneError, readBody } from './read-body.js';
import { sendError, sendJson } from './send-response.js';

/** A pull API call as the relay's core takes it. */
export interface RelayRouteCall {
  path: string;
  body: Buffer;
  signal: AbortSignal;
}

interface RelayRouteDeps extends BearerGuard {
  /** The pull API's core (relay/). */
  handle: (call: RelayRouteCall) => Promise<{ status: number; body: string }>;
  /** `relay.token`: the only credential the pull API takes. */
  token: string;
  bodyTimeoutMs: number;
}

/** What a home is told to wait when the relay's store cannot write. */
const STORE_RETRY_AFTER_SECONDS = 5;
/** An acknowledgement names at most 1,000 ids of 100 characters and their refusals: well under this. */
const MAX_BODY_BYTES = 2 * 1024 * 1024;

/**
 * The pull API's `node:http` side (`POST /relay/lease`, `POST /relay/ack`): lockout (429),
 * `Authorization: Bearer <relay.token>` in constant time (401, counted toward the lockout), POST only
 * (405), the body within its bounds (413, 408); then the core's answer. A home that hangs up ends its
 * long poll.
 */
export function createRelayRoute(deps: RelayRouteDeps): RequestHandler {
  const verify = createTokenVerifier(deps.token);
  const refuse = new RequestError('relay_unauthorized');
  const serve = async (req: IncomingMessage, res: ServerResponse, path: string): Promise<void> => {
    const gone = new AbortController();
    const onClose = (): void => gone.abort();
    res.once('close', onClose);
    try {
      const body = await readBody(req, { maxBytes: MAX_BODY_BYTES, timeoutMs: deps.bodyTimeoutMs });
      const answer = await deps.handle({ path, body, signal: gone.signal });
      if (!res.destroyed) sendJson(res, answer.status, answer.body);
    } catch (error) {
      if (error instanceof ClientGoneError) return;
      if (error instanceof RequestError) {
        sendError(req, res, error);
        return;
      }
      if (isStoreUnavailable(error)) {
        sendError(req, res, new RequestError('store_unavailable', { retryAfterSeconds: STORE_RETRY_AFTER_SECONDS }));
        return;
      }
      deps.log.error('relay pull request failed', { path, err: error });
      sendError(req, res, new RequestError('internal_error'));
    } finally {
      res.off('close', onClose);
    }
  };
  return (req, res) => {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q === -1 ? url : url.slice(0, q);
    res.setHeader('www-authenticate', 'Bearer');
    if (!admitBearer(deps, req, res, { verify, refuse, surface: 'relay' })) return;
    res.removeHeader('www-authenticate');
    if (req.method !== 'POST') {
      sendError(req, res, new RequestError('method_not_allowed', { message: 'Only POST is accepted on /relay.' }));
      return;
    }
    void serve(req, res, path);
  };
}
