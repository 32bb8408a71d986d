import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AuthLimiter } from '../auth/index.js';
import { createTokenVerifier } from '../auth/index.js';
import type { Clock } from '../common/clock.js';
import { RequestError } from '../common/errors.js';
import type { Log } from '../common/log.js';
import type { RequestHandler } from './create-request-handler.js';
import { admitBearer } from './admit-bearer.js';
import { refuseUnlessGetOrHead, sendError } from './send-response.js';

interface MetricsRouteDeps {
  /** The Prometheus text and its content type. */
  render: () => Promise<string>;
  contentType: string;
  /** `gateway.auth.token`: the only credential `/metrics` takes (never the hook token). */
  token: string | undefined;
  /** `gateway.metrics.public`: no token asked. @default false */
  public: boolean;
  /** The hooks' limiter: guessing the gateway token locks a client out like guessing the hook token. */
  limiter: AuthLimiter;
  clientAddress: (socketAddress: string | undefined, forwardedFor: string | string[] | undefined) => string;
  clock: Clock;
  log: Log;
}

/** `GET /metrics`: Prometheus text, behind `Authorization: Bearer <gateway.auth.token>` unless public. */
export function createMetricsRoute(deps: MetricsRouteDeps): RequestHandler {
  const verify = deps.token === undefined ? null : createTokenVerifier(deps.token);
  const refuse = new RequestError('metrics_unauthorized', {
    message:
      deps.token === undefined
        ? 'No gateway token is configured: set gateway.auth.token and scrape with it as a Bearer token, or set gateway.metrics.public: true.'
        : 'Missing or invalid gateway token (gateway.auth.token) for /metrics; send it as "Authorization: Bearer <token>".',
  });
  const serve = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    try {
      const body = await deps.render();
      res.writeHead(200, {
        'content-type': deps.contentType,
        'content-length': Buffer.byteLength(body),
        'cache-control': 'no-store',
      });
      res.end(req.method === 'HEAD' ? undefined : body);
    } catch (error) {
      deps.log.error('rendering metrics failed', { err: error });
      sendError(req, res, new RequestError('internal_error'));
    }
  };
  return (req, res) => {
    // A scrape sends no body; whatever comes is read and dropped.
    req.resume();
    if (refuseUnlessGetOrHead(req, res)) return;
    if (!deps.public && !admitBearer(deps, req, res, { verify, refuse, surface: 'metrics' })) return;
    void serve(req, res);
  };
}
