import { MAX_JSON_DEPTH } from './json-depth.js';

/**
 * One catalog of every error code the gateway can answer with, its HTTP status and its public
 * message. Tests assert on `code`; the message is what a caller reads.
 */
export const ERROR_CATALOG = {
  not_found: { status: 404, message: 'No such endpoint.' },
  bad_request: { status: 400, message: 'Malformed HTTP request.' },
  headers_too_large: { status: 431, message: 'Request headers are too large.' },
  method_not_allowed: { status: 405, message: 'Only POST is accepted on hook endpoints.' },
  idempotency_key_reused: {
    status: 422,
    message: 'This Idempotency-Key came with another request body within its window; use a new key for a new request.',
  },
  expectation_failed: { status: 417, message: 'The only expectation accepted is "Expect: 100-continue".' },
  token_in_query: {
    status: 400,
    message: 'Tokens in the query string are refused; send "Authorization: Bearer <token>" instead.',
  },
  rate_limited: {
    status: 429,
    message: 'Too many failed authentication attempts from this address; retry after the delay.',
  },
  unauthorized: { status: 401, message: 'Missing or invalid hook token.' },
  signature_invalid: { status: 401, message: 'Missing or invalid request signature.' },
  payload_too_large: { status: 413, message: 'Request body is larger than the allowed maximum.' },
  body_timeout: { status: 408, message: 'Request body was not received in time.' },
  headers_timeout: { status: 408, message: 'Request headers were not received in time.' },
  invalid_json: { status: 400, message: 'Request body is not valid JSON.' },
  invalid_body: { status: 400, message: 'Request body must be a JSON object.' },
  json_too_deep: {
    status: 400,
    message: `Request body nests objects or arrays more than ${MAX_JSON_DEPTH} levels deep.`,
  },
  too_many_bodies: {
    status: 429,
    message: 'Too many request bodies from this address are being received at once; retry after the delay.',
  },
  invalid_payload: { status: 400, message: 'Payload is invalid.' },
  too_many_items: { status: 400, message: "The payload carries more items than the mapping's forEach.maxItems." },
  actions_too_large: {
    status: 413,
    message: "The actions this request's items make are larger than one request may record.",
  },
  invalid_idempotency_key: {
    status: 400,
    message: 'Idempotency-Key must be 1 to 255 visible ASCII characters.',
  },
  agent_not_allowed: { status: 400, message: 'This agentId is not allowed by hooks.allowedAgentIds.' },
  session_key_not_allowed: { status: 400, message: 'This sessionKey is not allowed.' },
  model_not_allowed: { status: 400, message: 'This model is not allowed.' },
  channel_not_configured: { status: 400, message: 'This channel is not configured.' },
  hook_not_found: { status: 404, message: 'No hook mapping matches this name.' },
  transform_failed: { status: 500, message: 'The hook transform failed.' },
  internal_error: { status: 500, message: 'Internal error.' },
  unavailable: { status: 503, message: 'The gateway is shutting down or not ready.' },
  over_capacity: { status: 503, message: 'The gateway is at its connection limit; retry after the delay.' },
  too_many_connections: {
    status: 429,
    message: 'Too many connections from this address are open at once; retry after the delay.',
  },
  store_unavailable: { status: 503, message: 'The gateway cannot record requests right now; retry after the delay.' },
  admin_unauthorized: { status: 401, message: 'Missing or invalid gateway token (gateway.auth.token).' },
  admin_disabled: { status: 404, message: 'The admin API is off: set gateway.auth.token to turn it on.' },
  record_not_found: { status: 404, message: 'No such record.' },
  invalid_query: { status: 400, message: 'A query parameter is invalid.' },
  run_not_cancellable: { status: 409, message: 'Only a queued run can be cancelled.' },
  delivery_not_retryable: { status: 409, message: 'Only a failed or skipped delivery can be retried.' },
  subscription_ending: { status: 409, message: 'This subscription is already ending.' },
  payload_not_recorded: {
    status: 409,
    message: 'This request has no recorded payload to replay (gateway.recordPayloads was off when it arrived).',
  },
  worker_stalled: { status: 503, message: 'A background worker (runs or deliveries) has stopped making progress.' },
  metrics_unauthorized: { status: 401, message: 'Missing or invalid gateway token (gateway.auth.token) for /metrics.' },
  mcp_unauthorized: {
    status: 401,
    message: 'Missing or invalid MCP token (mcp.token); send it as "Authorization: Bearer <token>".',
  },
} as const satisfies Record<string, { status: number; message: string }>;

export type ErrorCode = keyof typeof ERROR_CATALOG;

export interface Issue {
  /** Dot-path of the offending field (`mode`, `hooks.token`); empty for the whole value. */
  path: string;
  message: string;
}

/** Base of every error that carries a stable code. */
export class HookgateError extends Error {
  readonly code: string;
  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.name = 'HookgateError';
  }
}

/** An error the caller must react to: it becomes a 4xx (or 5xx) response. */
export class RequestError extends HookgateError {
  readonly status: number;
  readonly issues: readonly Issue[] | undefined;
  readonly retryAfterSeconds: number | undefined;
  declare readonly code: ErrorCode;
  constructor(
    code: ErrorCode,
    options: { message?: string; issues?: readonly Issue[]; retryAfterSeconds?: number; cause?: unknown } = {},
  ) {
    super(code, options.message ?? ERROR_CATALOG[code].message, { cause: options.cause });
    this.name = 'RequestError';
    this.status = ERROR_CATALOG[code].status;
    this.issues = options.issues;
    this.retryAfterSeconds = options.retryAfterSeconds;
  }
}

/** An error the operator must react to: bad config or environment; the process exits non-zero. */
export class ConfigError extends HookgateError {
  readonly issues: readonly Issue[];
  constructor(issues: readonly Issue[], message = 'Invalid configuration.') {
    super('invalid_config', message);
    this.name = 'ConfigError';
    this.issues = issues;
  }
}

/** Formats issues one per line as `path: message`, the form the CLI prints. */
export function formatIssues(issues: readonly Issue[]): string {
  return issues.map((i) => `  - ${i.path === '' ? '(root)' : i.path}: ${i.message}`).join('\n');
}
