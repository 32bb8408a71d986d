import { MAX_JSON_DEPTH, textExceedsJsonDepth } from '../../common/json-depth.js';
import { McpError, RPC } from './mcp-error.js';

/** The protocol versions served: 2026-07-28's stateless `server/discover`, and the `initialize` ones before it. */
export const SUPPORTED_VERSIONS = ['2026-07-28', '2025-11-25', '2025-06-18', '2025-03-26'] as const;

/** An MCP request as plain values: no `node:http` here. */
export interface McpHttpCall {
  method: string;
  /** Header names in lower case. */
  headers: Readonly<Record<string, string | undefined>>;
  body: Buffer;
}

export interface McpHttpAnswer {
  status: number;
  headers: Record<string, string>;
  /** Empty for a 202. */
  body: string;
}

/** What a method sees of the request beyond its params. */
interface McpContext {
  /** The version the client speaks (its header, else its `_meta`, else the oldest served). */
  protocolVersion: string;
}

/** A method's handler: params in, result out, `McpError` for a refusal. */
export type McpMethod = (params: Record<string, unknown>, ctx: McpContext) => Promise<Record<string, unknown>>;

const JSON_TYPE = { 'content-type': 'application/json' };
const PROTOCOL_META = 'io.modelcontextprotocol/protocolVersion';

type Id = string | number | null;

const rpcError = (status: number, id: Id, code: number, message: string, data?: unknown): McpHttpAnswer => ({
  status,
  headers: JSON_TYPE,
  body: JSON.stringify({ jsonrpc: '2.0', id, error: { code, message, ...(data === undefined ? {} : { data }) } }),
});

/** An HTTP-level refusal (no JSON-RPC exchange took place): the gateway's own error body. */
const httpError = (
  status: number,
  code: string,
  error: string,
  headers: Record<string, string> = {},
): McpHttpAnswer => ({
  status,
  headers: { 'content-type': 'application/json; charset=utf-8', ...headers },
  body: JSON.stringify({ ok: false, error, code }),
});

const isId = (v: unknown): v is string | number =>
  typeof v === 'string' || (typeof v === 'number' && Number.isSafeInteger(v));

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

function unsupportedVersion(status: number, id: Id, requested: string): McpHttpAnswer {
  return rpcError(status, id, RPC.unsupportedProtocolVersion, `Unsupported protocol version "${requested}".`, {
    supported: SUPPORTED_VERSIONS,
    requested,
  });
}

/**
 * Streamable HTTP over JSON-RPC 2.0, as a pure function: one JSON-RPC message per POST, answered
 * with `application/json` (no SSE: nothing here streams). Malformed input gets the JSON-RPC codes:
 * -32700 (not JSON) and -32600 (not a request) with 400, -32601 and -32602 with 200 (the exchange
 * was sound, the call was not); a method that fails unexpectedly is -32603, never an HTTP 500.
 * Notifications and client responses are accepted with 202 and no body.
 */
export function createMcpHttpHandler(
  methods: Readonly<Record<string, McpMethod>>,
  onInternalError: (method: string, error: unknown) => void,
): (call: McpHttpCall) => Promise<McpHttpAnswer> {
  const supported: ReadonlySet<string> = new Set(SUPPORTED_VERSIONS);
  return async (call) => {
    if (call.method !== 'POST') {
      return httpError(
        405,
        'method_not_allowed',
        'Only POST is accepted on the MCP endpoint (no event stream is offered).',
        {
          allow: 'POST',
        },
      );
    }
    const type = (call.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
    if (type !== 'application/json') {
      return httpError(415, 'unsupported_media_type', 'The MCP endpoint takes Content-Type: application/json.');
    }
    // Checked on the bytes first, as the hooks' bodies are: a deeply nested body is refused, not parsed.
    if (textExceedsJsonDepth(call.body))
      return rpcError(
        400,
        null,
        RPC.invalidRequest,
        `Invalid Request: the body nests more than ${MAX_JSON_DEPTH} levels deep.`,
      );
    let message: unknown;
    try {
      message = JSON.parse(call.body.toString('utf8'));
    } catch {
      return rpcError(400, null, RPC.parseError, 'Parse error: the body is not valid JSON.');
    }
    if (Array.isArray(message))
      return rpcError(
        400,
        null,
        RPC.invalidRequest,
        'Invalid Request: batches are not supported; send one message per POST.',
      );
    if (!isObject(message))
      return rpcError(400, null, RPC.invalidRequest, 'Invalid Request: the body must be a JSON object.');
    const id: Id = isId(message['id']) ? message['id'] : null;
    if (message['jsonrpc'] !== '2.0')
      return rpcError(400, id, RPC.invalidRequest, 'Invalid Request: jsonrpc must be "2.0".');
    const header = call.headers['mcp-protocol-version'];
    if (header !== undefined && !supported.has(header)) return unsupportedVersion(400, id, header);
    if (!('method' in message)) {
      // A client's answer to a server request: this server sends none, so it is taken and dropped.
      if ('result' in message || 'error' in message) return { status: 202, headers: {}, body: '' };
      return rpcError(400, id, RPC.invalidRequest, 'Invalid Request: a request needs a method.');
    }
    const method = message['method'];
    if (typeof method !== 'string' || method === '')
      return rpcError(400, id, RPC.invalidRequest, 'Invalid Request: method must be a non-empty string.');
    if (!('id' in message)) return { status: 202, headers: {}, body: '' };
    if (!isId(message['id']))
      return rpcError(400, null, RPC.invalidRequest, 'Invalid Request: id must be a string or an integer.');
    const named = call.headers['mcp-method'];
    if (named !== undefined && named !== method) {
      return rpcError(
        400,
        id,
        RPC.invalidRequest,
        `Invalid Request: the Mcp-Method header ("${named}") is not the method.`,
      );
    }
    const params = message['params'] ?? {};
    if (!isObject(params)) return rpcError(200, id, RPC.invalidParams, 'Invalid params: params must be an object.');
    const meta = params['_meta'];
    const metaVersion = isObject(meta) ? meta[PROTOCOL_META] : undefined;
    if (typeof metaVersion === 'string' && !supported.has(metaVersion)) return unsupportedVersion(200, id, metaVersion);
    const handler = Object.hasOwn(methods, method) ? methods[method] : undefined;
    if (handler === undefined) return rpcError(200, id, RPC.methodNotFound, `Method not found: ${method}.`);
    const protocolVersion = header ?? (typeof metaVersion === 'string' ? metaVersion : SUPPORTED_VERSIONS.at(-1)!);
    try {
      const result = await handler(params, { protocolVersion });
      return {
        status: 200,
        headers: JSON_TYPE,
        body: JSON.stringify({ jsonrpc: '2.0', id, result: { ...result, resultType: 'complete' } }),
      };
    } catch (error) {
      if (error instanceof McpError) return rpcError(200, id, error.code, error.message, error.data);
      onInternalError(method, error);
      return rpcError(200, id, RPC.internalError, 'Internal error.');
    }
  };
}
