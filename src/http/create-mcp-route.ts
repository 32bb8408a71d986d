import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AuthLimiter } from '../auth/index.js';
import { createTokenVerifier } from '../auth/index.js';
import type { Clock } from '../common/clock.js';
import { RequestError } from '../common/errors.js';
import type { Log } from '../common/log.js';
import type { RequestHandler } from './create-request-handler.js';
import { ClientGoneError, readBody } from './read-body.js';
import { sendError } from './send-response.js';

/** An MCP request as the endpoint's core takes it: plain values. */
export interface McpRouteCall {
  method: string;
  headers: Readonly<Record<string, string | undefined>>;
  body: Buffer;
}

export interface McpRouteAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export interface McpRouteDeps {
  /** The JSON-RPC core (outputs/mcp-events). */
  handle: (call: McpRouteCall) => Promise<McpRouteAnswer>;
  /** `mcp.token`: the only credential the endpoint takes. */
  token: string;
  /** The hooks' limiter: guessing the MCP token locks a client out like guessing the hook token. */
  limiter: AuthLimiter;
  clientAddress: (socketAddress: string | undefined, forwardedFor: string | string[] | undefined) => string;
  clock: Clock;
  log: Log;
  bodyTimeoutMs: number;
  /** Largest request body read. @default 262144 */
  maxBodyBytes?: number;
}

function bearer(req: IncomingMessage): string | undefined {
  return /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '')?.[1];
}

function plainHeaders(req: IncomingMessage): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  for (const [k, v] of Object.entries(req.headers)) out[k] = Array.isArray(v) ? v.join(', ') : v;
  return out;
}

/**
 * The MCP endpoint's `node:http` side (`mcp.path`): lockout (429), `Authorization: Bearer
 * <mcp.token>` in constant time (401, counted toward the lockout), the body within its bounds
 * (413, 408); then the pure JSON-RPC core's answer, written as it is.
 */
export function createMcpRoute(deps: McpRouteDeps): RequestHandler {
  const verify = createTokenVerifier(deps.token);
  const maxBytes = deps.maxBodyBytes ?? 256 * 1024;
  const serve = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    try {
      const body =
        req.method === 'POST' ? await readBody(req, { maxBytes, timeoutMs: deps.bodyTimeoutMs }) : Buffer.alloc(0);
      if (req.method !== 'POST') req.resume();
      const answer = await deps.handle({ method: req.method ?? '', headers: plainHeaders(req), body });
      if (res.destroyed) return;
      res.writeHead(answer.status, { ...answer.headers, 'content-length': Buffer.byteLength(answer.body) });
      res.end(answer.body);
    } catch (error) {
      if (error instanceof ClientGoneError) return;
      if (error instanceof RequestError) {
        sendError(req, res, error);
        return;
      }
      deps.log.error('MCP request failed', { err: error });
      sendError(req, res, new RequestError('internal_error'));
    }
  };
  return (req, res) => {
    const client = deps.clientAddress(req.socket.remoteAddress, req.headers['x-forwarded-for']);
    const now = deps.clock.now();
    const lock = deps.limiter.check(client, now);
    if (lock.locked) {
      sendError(req, res, new RequestError('rate_limited', { retryAfterSeconds: lock.retryAfterSeconds }));
      return;
    }
    if (!verify(bearer(req))) {
      const after = deps.limiter.recordFailure(client, now);
      if (after.locked)
        deps.log.warn('auth lockout started', { client, retryAfterSeconds: after.retryAfterSeconds, surface: 'mcp' });
      res.setHeader('www-authenticate', 'Bearer');
      sendError(req, res, new RequestError('mcp_unauthorized'));
      return;
    }
    void serve(req, res);
  };
}
