import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AuthLimiter, SignatureCandidate, SignatureGate, SignedBy } from '../auth/index.js';
import { createSignatureGate, extractToken } from '../auth/index.js';
import type { Clock } from '../common/clock.js';
import { RequestError } from '../common/errors.js';
import type { Log } from '../common/log.js';
import type { HooksConfig } from '../config/index.js';
import type { HookHandler, HookOutcome, Payload } from '../hooks/index.js';
import { isFormBody, parseFormObject, parseJsonObject } from './parse-request-body.js';
import { checkDeclaredLength, ClientGoneError, readBody } from './read-body.js';
import { sendError, sendJson } from './send-response.js';

export interface RequestHandlerDeps {
  hooks: HooksConfig;
  bodyTimeoutMs: number;
  verifyToken: (candidate: string | undefined) => boolean;
  limiter: AuthLimiter;
  /** Provider signatures of the mappings that declare `verify`. @default built from `hooks.mappings` */
  signatures?: SignatureGate;
  clientAddress: (socketAddress: string | undefined, forwardedFor: string | string[] | undefined) => string;
  handleHook: HookHandler;
  clock: Clock;
  log: Log;
  /** False until the store is open, and again while shutting down. */
  isReady: () => boolean;
}

export type RequestHandler = (req: IncomingMessage, res: ServerResponse, expectsContinue?: boolean) => void;

const HEALTH_OK = '{"ok":true}';

function outcomeResponse(outcome: HookOutcome): { status: number; body: string } {
  switch (outcome.kind) {
    case 'wake':
      return { status: 200, body: `{"ok":true,"mode":"${outcome.event.mode}","eventId":"${outcome.event.id}"}` };
    case 'agent':
      return { status: 202, body: `{"ok":true,"runId":"${outcome.run.id}"}` };
    case 'skip':
      return { status: 204, body: '' };
  }
}

/** Slack checks a new Events API URL with a signed `url_verification` request and expects its challenge back. */
function slackChallenge(signedBy: SignedBy | undefined, payload: Payload): string | undefined {
  if (signedBy === undefined || !signedBy.kinds.includes('slack')) return undefined;
  const challenge = payload['challenge'];
  return payload['type'] === 'url_verification' && typeof challenge === 'string' ? challenge : undefined;
}

/**
 * The ingress, in the order of DESIGN §3: method (405), token in query (400), lockout (429),
 * token (401), body cap and deadline (413/408), signature when the token is absent or wrong and a
 * mapping for this name declares `verify` (401), JSON or form (400), hook (400/404), durable
 * record, answer.
 */
export function createRequestHandler(deps: RequestHandlerDeps): RequestHandler {
  const base = deps.hooks.path;
  const prefix = `${base}/`;
  const enabled = deps.hooks.enabled;
  const limits = { maxBytes: deps.hooks.maxBodyBytes, timeoutMs: deps.bodyTimeoutMs };
  const gate = deps.signatures ?? createSignatureGate(deps.hooks.mappings);

  const countFailure = (client: string, now: number): void => {
    const after = deps.limiter.recordFailure(client, now);
    if (after.locked) deps.log.warn('auth lockout started', { client, retryAfterSeconds: after.retryAfterSeconds });
  };

  const fail = (req: IncomingMessage, res: ServerResponse, error: unknown, bodyWithheld = false): void => {
    if (error instanceof ClientGoneError) return;
    if (error instanceof RequestError) {
      if (error.status >= 500) deps.log.error('request failed', { code: error.code, err: error.cause ?? error });
      else deps.log.debug('request rejected', { code: error.code, status: error.status });
      sendError(req, res, error, { bodyWithheld });
      return;
    }
    deps.log.error('request failed', { err: error });
    sendError(req, res, new RequestError('internal_error'), { bodyWithheld });
  };

  /** `candidates` is set when the request must be authenticated by its signature. */
  const handleHook = async (
    req: IncomingMessage,
    res: ServerResponse,
    call: { name: string; client: string; candidates: readonly SignatureCandidate[] | undefined },
    expectsContinue: boolean,
  ) => {
    if (expectsContinue) {
      // Refuse a declared oversize body before inviting it.
      const tooLarge = checkDeclaredLength(req, limits.maxBytes);
      if (tooLarge !== null) {
        fail(req, res, tooLarge, true);
        return;
      }
      res.writeContinue();
    }
    try {
      const raw = await readBody(req, limits);
      let signedBy: SignedBy | undefined;
      if (call.candidates !== undefined) {
        const verdict = gate.verify(call.candidates, { headers: req.headers, rawBody: raw, nowMs: deps.clock.now() });
        if (!verdict.ok) throw new RequestError('signature_invalid', { message: `Missing or invalid request signature (${verdict.reason}).` });
        signedBy = verdict.signedBy;
      }
      // Forms are for mapped senders (Slack commands, Twilio); /wake and /agent take JSON only.
      const form = call.name !== 'wake' && call.name !== 'agent' && isFormBody(req.headers['content-type']);
      const payload = form ? parseFormObject(raw) : parseJsonObject(raw);
      const challenge = slackChallenge(signedBy, payload);
      if (challenge !== undefined) {
        sendJson(res, 200, JSON.stringify({ challenge }));
        return;
      }
      const outcome = await deps.handleHook({
        name: call.name,
        payload,
        headers: req.headers,
        url: req.url ?? '',
        ...(signedBy === undefined ? {} : { signedBy: { mappingIds: signedBy.mappingIds } }),
        ...(signedBy?.deliveryId === undefined ? {} : { deliveryId: signedBy.deliveryId }),
        ...(signedBy?.retryNum === undefined ? {} : { retryNum: signedBy.retryNum }),
      });
      const { status, body } = outcomeResponse(outcome);
      if (status === 204) {
        res.writeHead(204);
        res.end();
      } else {
        sendJson(res, status, body);
      }
    } catch (error) {
      if (error instanceof RequestError && error.code === 'signature_invalid') countFailure(call.client, deps.clock.now());
      fail(req, res, error);
    }
  };

  return (req, res, expectsContinue = false) => {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q === -1 ? url : url.slice(0, q);

    if (path === '/healthz') {
      const ready = deps.isReady();
      sendJson(res, ready ? 200 : 503, ready ? HEALTH_OK : '{"ok":false,"code":"unavailable"}');
      return;
    }
    if (!enabled || !path.startsWith(prefix)) {
      fail(req, res, new RequestError('not_found'), expectsContinue);
      return;
    }
    if (req.method !== 'POST') {
      fail(req, res, new RequestError('method_not_allowed'), expectsContinue);
      return;
    }
    if (q !== -1 && new URLSearchParams(url.slice(q + 1)).has('token')) {
      fail(req, res, new RequestError('token_in_query'), expectsContinue);
      return;
    }
    const client = deps.clientAddress(req.socket.remoteAddress, req.headers['x-forwarded-for']);
    const now = deps.clock.now();
    const lock = deps.limiter.check(client, now);
    if (lock.locked) {
      fail(req, res, new RequestError('rate_limited', { retryAfterSeconds: lock.retryAfterSeconds }), expectsContinue);
      return;
    }
    // One trailing slash is tolerated: `/hooks/wake/` is `/hooks/wake`.
    let name = path.slice(prefix.length);
    if (name.endsWith('/')) name = name.slice(0, -1);
    // A mapping with `verify` is authenticated by its signature instead of the token; which
    // mappings may serve this name is known from the path, before the body is read.
    const candidates = gate.candidatesFor(name);
    const tokenOk = deps.verifyToken(extractToken(req.headers));
    if (!tokenOk && candidates.length === 0) {
      countFailure(client, now);
      fail(req, res, new RequestError('unauthorized'), expectsContinue);
      return;
    }
    if (!deps.isReady()) {
      fail(req, res, new RequestError('unavailable'), expectsContinue);
      return;
    }
    void handleHook(req, res, { name, client, candidates: tokenOk ? undefined : candidates }, expectsContinue);
  };
}
