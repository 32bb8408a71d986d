import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AuthLimiter } from '../auth/index.js';
import { extractToken } from '../auth/index.js';
import type { Clock } from '../common/clock.js';
import { RequestError } from '../common/errors.js';
import { createThrottledLog } from '../common/create-throttled-log.js';
import { textExceedsJsonDepth } from '../common/json-depth.js';
import type { Log } from '../common/log.js';
import type { HooksConfig } from '../config/index.js';
import type { HookHandler, HookOutcome, Payload } from '../hooks/index.js';
import { isStoreUnavailable } from '../store/index.js';
import { logAccessOnClose, type AccessEntry } from './access-log.js';
import { checkDeclaredLength, ClientGoneError, readBody } from './read-body.js';
import type { RequestObserver } from './request-observer.js';
import { sendError, sendJson } from './send-response.js';

/** The parts built from the config file, which a reload replaces as a whole. */
export interface IngressSettings {
  hooks: HooksConfig;
  bodyTimeoutMs: number;
  verifyToken: (candidate: string | undefined) => boolean;
  handleHook: HookHandler;
}

export interface RequestHandlerDeps {
  /** Read once per request, so a request runs start to end on one config. */
  settings: () => IngressSettings;
  limiter: AuthLimiter;
  clientAddress: (socketAddress: string | undefined, forwardedFor: string | string[] | undefined) => string;
  clock: Clock;
  log: Log;
  /** False until the store is open, and again while shutting down. */
  isReady: () => boolean;
  /** Sees every hook request from admission to answer (the request log). */
  observer?: RequestObserver;
  /** Serves `/admin` and `/admin/…` (the admin API and dashboard). */
  admin?: RequestHandler;
}

export type RequestHandler = (req: IncomingMessage, res: ServerResponse, expectsContinue?: boolean) => void;

const HEALTH_OK = '{"ok":true}';
/** What a client is told to wait when the store cannot write; and how often the outage is logged. */
const STORE_RETRY_AFTER_SECONDS = 5;
const STORE_LOG_INTERVAL_MS = 10_000;
/** What a client reading too many bodies at once is told to wait. */
const BODIES_RETRY_AFTER_SECONDS = 1;

function parseJsonObject(raw: Buffer): Payload {
  if (raw.length === 0) throw new RequestError('invalid_json', { message: 'Request body is empty; send a JSON object.' });
  // Refused before parsing: deeper values overflow the stack wherever they are serialised later.
  if (textExceedsJsonDepth(raw)) throw new RequestError('json_too_deep');
  let value: unknown;
  try {
    value = JSON.parse(raw.toString('utf8'));
  } catch {
    throw new RequestError('invalid_json');
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new RequestError('invalid_body');
  return value as Payload;
}

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

/**
 * The ingress, in the order of DESIGN §3: method (405), token in query (400), lockout (429),
 * token (401), bodies in flight from this client (429), body cap and deadline (413/408), JSON and
 * its depth (400), hook (400/404), durable record (503 when the store cannot write), answer.
 */
export function createRequestHandler(deps: RequestHandlerDeps): RequestHandler {
  /** Bodies being read per client address; an address leaves the map when its count is back to 0. */
  const reading = new Map<string, number>();
  const reportStoreOutage = createThrottledLog(deps.log, 'error', 'store cannot write; answering 503 store_unavailable', {
    intervalMs: STORE_LOG_INTERVAL_MS,
    now: deps.clock.now,
  });
  const fail = (req: IncomingMessage, res: ServerResponse, entry: AccessEntry, error: unknown, bodyWithheld = false): void => {
    if (error instanceof ClientGoneError) return;
    deps.observer?.noteError(res, error);
    if (!(error instanceof RequestError) && isStoreUnavailable(error)) {
      entry.code = 'store_unavailable';
      reportStoreOutage({ code: (error as { code?: unknown }).code, error: (error as Error).message });
      sendError(req, res, new RequestError('store_unavailable', { retryAfterSeconds: STORE_RETRY_AFTER_SECONDS }), { bodyWithheld });
      return;
    }
    if (error instanceof RequestError) {
      entry.code = error.code;
      if (error.status >= 500) deps.log.error('request failed', { code: error.code, hook: entry.hook, err: error.cause ?? error });
      sendError(req, res, error, { bodyWithheld });
      return;
    }
    entry.code = 'internal_error';
    deps.log.error('request failed', { hook: entry.hook, err: error });
    sendError(req, res, new RequestError('internal_error'), { bodyWithheld });
  };

  const readCounted = async (req: IncomingMessage, client: string, limits: { maxBytes: number; timeoutMs: number }): Promise<Buffer> => {
    reading.set(client, (reading.get(client) ?? 0) + 1);
    try {
      return await readBody(req, limits);
    } finally {
      const left = (reading.get(client) ?? 1) - 1;
      if (left === 0) reading.delete(client);
      else reading.set(client, left);
    }
  };
  const handleHook = async (
    req: IncomingMessage, res: ServerResponse, entry: AccessEntry, settings: IngressSettings, name: string, expectsContinue: boolean,
  ) => {
    const limits = { maxBytes: settings.hooks.maxBodyBytes, timeoutMs: settings.bodyTimeoutMs };
    if ((reading.get(entry.client) ?? 0) >= settings.hooks.maxBodiesPerClient) {
      fail(req, res, entry, new RequestError('too_many_bodies', { retryAfterSeconds: BODIES_RETRY_AFTER_SECONDS }), expectsContinue);
      return;
    }
    if (expectsContinue) {
      // Refuse a declared oversize body before inviting it.
      const tooLarge = checkDeclaredLength(req, limits.maxBytes);
      if (tooLarge !== null) {
        fail(req, res, entry, tooLarge, true);
        return;
      }
      res.writeContinue();
    }
    try {
      const raw = await readCounted(req, entry.client, limits);
      deps.observer?.noteBody(res, raw);
      const call = { name, payload: parseJsonObject(raw), headers: req.headers, url: req.url ?? '' };
      const outcome = await settings.handleHook(call, deps.observer?.ingress(res));
      if (outcome.kind === 'wake') entry.eventId = outcome.event.id;
      else if (outcome.kind === 'agent') entry.runId = outcome.run.id;
      const { status, body } = outcomeResponse(outcome);
      if (status === 204) {
        res.writeHead(204);
        res.end();
      } else {
        sendJson(res, status, body);
      }
    } catch (error) {
      fail(req, res, entry, error);
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
    if (deps.admin !== undefined && (path === '/admin' || path.startsWith('/admin/'))) {
      deps.admin(req, res, expectsContinue);
      return;
    }
    const settings = deps.settings();
    const prefix = `${settings.hooks.path}/`;
    const client = deps.clientAddress(req.socket.remoteAddress, req.headers['x-forwarded-for']);
    const entry: AccessEntry = { method: req.method ?? '', path, hook: null, client, code: null };
    logAccessOnClose(res, entry, { log: deps.log, now: deps.clock.now, startedAt: deps.clock.now() });
    if (!settings.hooks.enabled || !path.startsWith(prefix)) {
      fail(req, res, entry, new RequestError('not_found'), expectsContinue);
      return;
    }
    // One trailing slash is tolerated: `/hooks/wake/` is `/hooks/wake`.
    let name = path.slice(prefix.length);
    if (name.endsWith('/')) name = name.slice(0, -1);
    entry.hook = name;
    deps.observer?.begin(res, entry);
    if (req.method !== 'POST') {
      fail(req, res, entry, new RequestError('method_not_allowed'), expectsContinue);
      return;
    }
    if (q !== -1 && new URLSearchParams(url.slice(q + 1)).has('token')) {
      fail(req, res, entry, new RequestError('token_in_query'), expectsContinue);
      return;
    }
    const now = deps.clock.now();
    const lock = deps.limiter.check(client, now);
    if (lock.locked) {
      fail(req, res, entry, new RequestError('rate_limited', { retryAfterSeconds: lock.retryAfterSeconds }), expectsContinue);
      return;
    }
    if (!settings.verifyToken(extractToken(req.headers))) {
      const after = deps.limiter.recordFailure(client, now);
      if (after.locked) deps.log.warn('auth lockout started', { client, retryAfterSeconds: after.retryAfterSeconds });
      fail(req, res, entry, new RequestError('unauthorized'), expectsContinue);
      return;
    }
    if (!deps.isReady()) {
      fail(req, res, entry, new RequestError('unavailable'), expectsContinue);
      return;
    }
    void handleHook(req, res, entry, settings, name, expectsContinue);
  };
}
