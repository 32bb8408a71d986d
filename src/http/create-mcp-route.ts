import type { IncomingMessage, ServerResponse } from 'node:http';
import { createTokenVerifier } from '../auth/index.js';
import { RequestError } from '../common/errors.js';
import { admitBearer, type BearerGuard } from './admit-bearer.js';
import type { RequestHandler } from './create-request-handler.js';
import { ClientGoneError, readBody } from './read-body.js';
import { sendError } from './send-response.js';

/** An MCP request as the endpoint's core takes it: plain values. */
interface McpRouteCall {
  method: string;
  headers: Readonly<Record<string, string | undefined>>;
  body: Buffer;
}

interface McpRouteAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

interface McpRouteDeps extends BearerGuard {
  /** The JSON-RPC core (outputs/mcp-events). */
  handle: (call: McpRouteCall) => Promise<McpRouteAnswer>;
  /** `mcp.token`: the only credential the endpoint takes. */
  token: string;
  bodyTimeoutMs: number;
  /** Largest request body read. @default 262144 */
  maxBodyBytes?: number;
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
  const refuse = new RequestError('mcp_unauthorized');
  return (req, res) => {
    res.setHeader('www-authenticate', 'Bearer');
    if (admitBearer(deps, req, res, { verify, refuse, surface: 'mcp' })) {
      res.removeHeader('www-authenticate');
      void serve(req, res);
    }
  };
}
