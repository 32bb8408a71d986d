/**
 * JSON-RPC 2.0 error codes, and those the MCP Events extension defines in the implementation range
 * (general-purpose codes, named for reuse across MCP).
 */
export const RPC = {
  parseError: -32700,
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internalError: -32603,
  /** MCP 2026-07-28: the protocol version asked for is not one this server speaks. */
  unsupportedProtocolVersion: -32022,
  /** An unknown event name, or no subscription matching the key on `events/unsubscribe`. */
  notFound: -32011,
  forbidden: -32012,
  /** A server limit was reached; `data.limit` names it. */
  resourceExhausted: -32013,
  /** Well-formed but not offered here (a delivery mode). */
  unsupported: -32014,
  /** The callback failed verification or could not be reached; `data.reason` is a category. */
  callbackEndpointError: -32015,
} as const;

/** An error a JSON-RPC request is answered with: its code, a sentence naming the problem, and data. */
export class McpError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: Readonly<Record<string, unknown>>,
  ) {
    super(message);
    this.name = 'McpError';
  }
}

/** `-32602` for one parameter: `path` is its dot-path (`delivery.url`), `message` says what is wrong. */
export function invalidParam(path: string, message: string): McpError {
  return new McpError(RPC.invalidParams, `Invalid params: ${path} ${message}.`, { path });
}
