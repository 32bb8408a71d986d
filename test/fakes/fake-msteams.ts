import { randomBytes, randomUUID } from 'node:crypto';
import {
  createFakeServer,
  type FakeServer,
  type RecordedRequest,
  type ScriptedResponse,
} from './create-fake-server.js';

/** A message the fake accepted: `to` is the (decoded) conversation id. */
export interface AcceptedMessage {
  to: string;
  text: string;
  textFormat: string | undefined;
}

export interface FakeMsTeams extends FakeServer {
  messages: AcceptedMessage[];
  /** Requests the token endpoint received, successful or not. */
  tokenRequests(): number;
  /** Makes every token issued so far invalid, as a rotated secret or a revocation would. */
  revokeTokens(): void;
}

const SCOPE = 'https://api.botframework.com/.default';

/** An Entra ID token error: `{error, error_description, error_codes, timestamp, trace_id, …}`. */
export function entraError(status: number, error: string, aadsts: number, description: string): ScriptedResponse {
  const traceId = randomUUID();
  const correlationId = randomUUID();
  const timestamp = '2024-05-01 12:00:00Z';
  return {
    status,
    body: {
      error,
      error_description: `AADSTS${aadsts}: ${description}\r\nTrace ID: ${traceId}\r\nCorrelation ID: ${correlationId}\r\nTimestamp: ${timestamp}`,
      error_codes: [aadsts],
      timestamp,
      trace_id: traceId,
      correlation_id: correlationId,
      error_uri: `https://login.microsoftonline.com/error?code=${aadsts}`,
    },
  };
}

/** A token answer as Entra ID gives it; scripted, the token is unknown to the connector. */
export function tokenAnswer(accessToken: string, expiresInSeconds = 3599): ScriptedResponse {
  return {
    status: 200,
    body: {
      token_type: 'Bearer',
      expires_in: expiresInSeconds,
      ext_expires_in: expiresInSeconds,
      access_token: accessToken,
    },
  };
}

/** A Bot Connector error: `{error: {code, message}}`. */
export function connectorError(
  status: number,
  code: string,
  message: string,
  headers?: Record<string, string>,
): ScriptedResponse {
  return { status, body: { error: { code, message } }, ...(headers === undefined ? {} : { headers }) };
}

/** The connector's 401, which comes from ASP.NET's authorization filter rather than its error model. */
export const CONNECTOR_UNAUTHORIZED: ScriptedResponse = {
  status: 401,
  body: { message: 'Authorization has been denied for this request.' },
};

interface ActivityBody {
  type?: unknown;
  text?: unknown;
  textFormat?: unknown;
}

const TEXT_FORMATS = new Set(['markdown', 'plain', 'xml']);

/**
 * A fake Entra ID token endpoint and Bot Framework Connector on one server:
 * `POST {url}/{tenant}/oauth2/v2.0/token` issues app tokens by client credentials for one
 * `appId`/`appPassword`, and `POST {url}{servicePath}/v3/conversations/{id}/activities` accepts
 * message activities carrying a token it issued, not expired by `now()` and not revoked. Answers
 * the real shapes: Entra's `invalid_client` (401), `unauthorized_client`, `invalid_scope`,
 * `unsupported_grant_type` (400); the connector's 401, `BadArgument` (400),
 * `ConversationNotFound` (404) and `MessageSizeTooBig` (413) over `maxActivityBytes`; 201 `{id}`.
 */
export function createFakeMsTeams(options: {
  appId: string;
  appPassword: string;
  /** @default 'botframework.com' */
  tenant?: string;
  /** Known conversation ids; any id is accepted when omitted. */
  conversations?: string[];
  /** @default Date.now */
  now?: () => number;
  /** @default 3599 */
  expiresInSeconds?: number;
  /** Largest activity body accepted, in UTF-8 bytes. @default 28672 */
  maxActivityBytes?: number;
}): Promise<FakeMsTeams> {
  const now = options.now ?? Date.now;
  const tenant = options.tenant ?? 'botframework.com';
  const expiresIn = options.expiresInSeconds ?? 3599;
  const maxBytes = options.maxActivityBytes ?? 28 * 1024;
  const conversations = options.conversations === undefined ? undefined : new Set(options.conversations);
  const tokenPath = `/${tenant}/oauth2/v2.0/token`;
  /** Issued token -> expiry (ms). */
  const issued = new Map<string, number>();
  const messages: AcceptedMessage[] = [];

  const issueToken = (req: RecordedRequest): ScriptedResponse => {
    if (
      !String(req.headers['content-type']).startsWith('application/x-www-form-urlencoded') ||
      typeof req.body !== 'string'
    ) {
      return entraError(
        400,
        'invalid_request',
        900144,
        "The request body must contain the following parameter: 'grant_type'.",
      );
    }
    const form = new URLSearchParams(req.body);
    if (form.get('grant_type') !== 'client_credentials') {
      return entraError(400, 'unsupported_grant_type', 70003, 'The app requested an unsupported grant type.');
    }
    if (form.get('client_id') !== options.appId) {
      return entraError(
        400,
        'unauthorized_client',
        700016,
        `Application with identifier '${form.get('client_id') ?? ''}' was not found in the directory '${tenant}'. This can happen if the application has not been installed by the administrator of the tenant or consented to by any user in the tenant. You may have sent your authentication request to the wrong tenant.`,
      );
    }
    if (form.get('client_secret') !== options.appPassword) {
      return entraError(
        401,
        'invalid_client',
        7000215,
        `Invalid client secret provided. Ensure the secret being sent in the request is the client secret value, not the client secret ID, for a secret added to app '${options.appId}'.`,
      );
    }
    if (form.get('scope') !== SCOPE) {
      return entraError(
        400,
        'invalid_scope',
        1002012,
        `The provided value for scope ${form.get('scope') ?? ''} is not valid. Client credential flows must have a scope value with /.default suffixed to the resource identifier (application ID URI).`,
      );
    }
    const token = `eyJ0eXAiOiJKV1QiLCJhbGciOiJSUzI1NiJ9.${randomBytes(48).toString('base64url')}.${randomBytes(32).toString('base64url')}`;
    issued.set(token, now() + expiresIn * 1000);
    return tokenAnswer(token, expiresIn);
  };

  const postActivity = (req: RecordedRequest, conversationId: string): ScriptedResponse => {
    const bearer = /^Bearer (.+)$/.exec(String(req.headers.authorization ?? ''))?.[1];
    const expiresAt = bearer === undefined ? undefined : issued.get(bearer);
    if (expiresAt === undefined || now() >= expiresAt) return CONNECTOR_UNAUTHORIZED;
    const body = req.body as ActivityBody | null;
    if (body === null || typeof body !== 'object') return connectorError(400, 'BadArgument', 'Missing activity');
    if (body.type !== 'message') return connectorError(400, 'BadArgument', 'Unknown activity type');
    if (typeof body.text !== 'string') return connectorError(400, 'BadArgument', 'Activity text must be a string');
    if (body.textFormat !== undefined && (typeof body.textFormat !== 'string' || !TEXT_FORMATS.has(body.textFormat))) {
      return connectorError(400, 'BadArgument', 'Invalid textFormat');
    }
    if (Buffer.byteLength(JSON.stringify(body)) > maxBytes)
      return connectorError(413, 'MessageSizeTooBig', 'Message size too large');
    if (conversations !== undefined && !conversations.has(conversationId)) {
      return connectorError(404, 'ConversationNotFound', 'Conversation not found.');
    }
    messages.push({
      to: conversationId,
      text: body.text,
      textFormat: typeof body.textFormat === 'string' ? body.textFormat : undefined,
    });
    return { status: 201, body: { id: String(1_700_000_000_000 + messages.length) } };
  };

  const handle = (req: RecordedRequest): ScriptedResponse => {
    if (req.method === 'POST' && req.path === tokenPath) return issueToken(req);
    const activity = /\/v3\/conversations\/([^/?]+)\/activities$/.exec(req.path);
    if (req.method === 'POST' && activity !== null) return postActivity(req, decodeURIComponent(activity[1]!));
    return connectorError(404, 'NotFound', `No route for ${req.method} ${req.path}`);
  };

  return createFakeServer(handle).then((server) =>
    Object.assign(server, {
      messages,
      tokenRequests: () => server.requests.filter((r) => r.path === tokenPath).length,
      revokeTokens: () => issued.clear(),
    }),
  );
}
