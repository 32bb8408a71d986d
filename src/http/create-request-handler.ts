import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AuthLimiter, SignatureCandidate, SignatureGate } from '../auth/index.js';
import { extractToken } from '../auth/index.js';
import type { Clock } from '../common/clock.js';
import { RequestError } from '../common/errors.js';
import { createThrottledLog } from '../common/create-throttled-log.js';
import type { Log } from '../common/log.js';
import type { HooksConfig } from '../config/index.js';
import { describeOutcome, type HookHandler, type MappedHookCall } from '../hooks/index.js';
import type { RunWaitResult } from '../runtime/index.js';
import { isStoreUnavailable } from '../store/index.js';
import { clipLogged, createAccessLog, type AccessEntry, type AccessLog } from './access-log.js';
import { addressGroup } from './create-peer-grouper.js';
import { createGroupCounts } from './group-counts.js';
import { parseHookCall } from './parse-hook-call.js';
import { checkDeclaredLength, ClientGoneError, readBody } from './read-body.js';
import type { ObservedRequest, RequestObserver } from './request-observer.js';
import { refuseUnlessGetOrHead, sendError, sendJson } from './send-response.js';

/** The parts built from the config file, which a reload replaces as a whole. */
export interface IngressSettings {
  hooks: HooksConfig;
  bodyTimeoutMs: number;
  verifyToken: (candidate: string | undefined) => boolean;
  /** Provider signatures of the mappings that declare `verify`. */
  signatures: SignatureGate;
  /** Waits for a run's end (and its delivery's) for a `waitForCompletion` caller; `signal` ends the wait early (the caller left). */
  waitForRun: (runId: string, timeoutMs: number, signal?: AbortSignal) => Promise<RunWaitResult>;
  handleHook: HookHandler;
  /**
   * Set on a relay: takes each call the door admitted, with its body as received, instead of the
   * hook handler, and gives the answer.
   */
  relay?: RelayDoor;
}

/** A relay's door: an admitted call (its raw bytes beside it) held for a home gateway; the answer to send. */
export type RelayDoor = (call: MappedHookCall, rawBody: Buffer) => Promise<{ status: number; body: string }>;

export interface RequestHandlerDeps {
  /** Read once per request, so a request runs start to end on one config. */
  settings: () => IngressSettings;
  limiter: AuthLimiter;
  clientAddress: (socketAddress: string | undefined, forwardedFor: string | string[] | undefined) => string;
  clock: Clock;
  log: Log;
  /** The access line of each hook request. @default every line, through `log` */
  access?: AccessLog;
  /** False until the store is open, and again while shutting down. */
  isReady: () => boolean;
  /** Sees every hook request from admission to answer (the request log). */
  observer?: RequestObserver;
  /** Serves `/admin` and `/admin/…` (the admin API and dashboard). */
  admin?: RequestHandler;
  /** Other exact paths served beside `/healthz` (`/readyz`, `/metrics`). */
  routes?: ReadonlyMap<string, RequestHandler>;
  /** Sees each hook request once answered (or abandoned: `status` null), for metrics. */
  onAnswered?: (hook: string | null, status: number | null) => void;
}

/** What the pipeline knows of one request: its access line, and the request log's view of it. */
interface Exchange extends AccessEntry {
  observed?: ObservedRequest | undefined;
}

export type RequestHandler = (req: IncomingMessage, res: ServerResponse, expectsContinue?: boolean) => void;

const HEALTH_OK = '{"ok":true}';
/** What a client is told to wait when the store cannot write; and how often the outage is logged. */
const STORE_RETRY_AFTER_SECONDS = 5;
const STORE_LOG_INTERVAL_MS = 10_000;
/** What a client reading too many bodies at once is told to wait. */
const BODIES_RETRY_AFTER_SECONDS = 1;

/**
 * The answer to a caller that waited for its run: where the run stands, whether its reply was
 * delivered, what went wrong as a category, why a run still queued is held (its budget), and the
 * reply itself only when the mapping asks.
 */
function waitedAnswer(r: RunWaitResult, returnReply: boolean): { status: number; body: string } {
  return {
    status: 200,
    body: JSON.stringify({
      ok: r.status === 'succeeded' && r.error === null,
      runId: r.runId,
      status: r.status,
      delivered: r.delivered,
      ...(r.error === null ? {} : { error: r.error }),
      ...(r.held === null ? {} : { held: r.held }),
      ...(returnReply && r.reply !== null ? { reply: r.reply } : {}),
    }),
  };
}

/**
 * The ingress, in the order of the README's status table: method (405), token in query (400),
 * lockout (429), token (401), readiness (503), bodies in flight from this client (429), body cap and
 * deadline (413/408), signature when the token is absent or wrong and a mapping for this name
 * declares `verify` (401), JSON or form and its depth (400), hook (400/404/500), durable record (503
 * when the store cannot write), answer.
 */
/**
 * Runs `wait` with a signal that aborts when the response closes before it is written (the client
 * went away), so a wait it started (polls, a signal listener) does not outlive it.
 */
async function waitWhileConnected<T>(res: ServerResponse, wait: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const gone = new AbortController();
  const onClose = (): void => gone.abort();
  res.once('close', onClose);
  try {
    return await wait(gone.signal);
  } finally {
    res.off('close', onClose);
  }
}

export function createRequestHandler(deps: RequestHandlerDeps): RequestHandler {
  /** Bodies being read per client address group (`addressGroup`). */
  const reading = createGroupCounts();
  const access = deps.access ?? createAccessLog(deps.log, { now: deps.clock.now });
  const reportStoreOutage = createThrottledLog(
    deps.log,
    'error',
    'store cannot write; answering 503 store_unavailable',
    {
      intervalMs: STORE_LOG_INTERVAL_MS,
      now: deps.clock.now,
    },
  );
  const countFailure = (client: string, now: number): void => {
    const after = deps.limiter.recordFailure(client, now);
    if (after.locked) deps.log.warn('auth lockout started', { client, retryAfterSeconds: after.retryAfterSeconds });
  };
  const fail = (
    req: IncomingMessage,
    res: ServerResponse,
    entry: Exchange,
    error: unknown,
    bodyWithheld = false,
  ): void => {
    if (error instanceof ClientGoneError) return;
    entry.observed?.noteError(error);
    if (!(error instanceof RequestError) && isStoreUnavailable(error)) {
      entry.code = 'store_unavailable';
      reportStoreOutage({ code: (error as { code?: unknown }).code, error: (error as Error).message });
      sendError(req, res, new RequestError('store_unavailable', { retryAfterSeconds: STORE_RETRY_AFTER_SECONDS }), {
        bodyWithheld,
      });
      return;
    }
    if (error instanceof RequestError) {
      entry.code = error.code;
      if (error.status >= 500)
        deps.log.error('request failed', { code: error.code, hook: entry.hook, err: error.cause ?? error });
      sendError(req, res, error, { bodyWithheld });
      return;
    }
    entry.code = 'internal_error';
    deps.log.error('request failed', { hook: entry.hook, err: error });
    sendError(req, res, new RequestError('internal_error'), { bodyWithheld });
  };

  /** Reads a body, counted against its client's group while it is being read. */
  const readCounted = (
    req: IncomingMessage,
    group: string,
    limits: { maxBytes: number; timeoutMs: number },
  ): Promise<Buffer> => {
    reading.add(group);
    const done = (): void => reading.remove(group);
    const body = readBody(req, limits);
    // The count drops before the reader sees the body or its error (a reaction added first runs first).
    body.then(done, done);
    return body;
  };
  const handleHook = async (
    req: IncomingMessage,
    res: ServerResponse,
    entry: Exchange,
    settings: IngressSettings,
    name: string,
    /** Set when the request must be authenticated by its signature. */
    candidates: readonly SignatureCandidate[] | undefined,
    expectsContinue: boolean,
  ) => {
    const limits = { maxBytes: settings.hooks.maxBodyBytes, timeoutMs: settings.bodyTimeoutMs };
    const group = addressGroup(entry.client);
    if (reading.get(group) >= settings.hooks.maxBodiesPerClient) {
      fail(
        req,
        res,
        entry,
        new RequestError('too_many_bodies', { retryAfterSeconds: BODIES_RETRY_AFTER_SECONDS }),
        expectsContinue,
      );
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
      const raw = await readCounted(req, group, limits);
      const door = parseHookCall(settings.signatures, {
        name,
        headers: req.headers,
        url: req.url ?? '',
        rawBody: raw,
        candidates,
        nowMs: deps.clock.now(),
        observed: entry.observed,
      });
      if (door.kind === 'challenge') {
        sendJson(res, 200, JSON.stringify({ challenge: door.challenge }));
        return;
      }
      if (settings.relay !== undefined) {
        const answer = await settings.relay(door.call, raw);
        if (!res.destroyed) sendJson(res, answer.status, answer.body);
        return;
      }
      const outcome = await settings.handleHook(door.call, entry.observed?.ingress());
      if (outcome.kind === 'wake') entry.eventId = outcome.event.id;
      else if (outcome.kind === 'event') entry.eventId = outcome.action.id;
      else if (outcome.kind === 'agent') entry.runId = outcome.run.id;
      const { status, body } =
        outcome.kind === 'agent' && outcome.wait !== undefined
          ? waitedAnswer(
              await waitWhileConnected(res, (signal) =>
                settings.waitForRun(outcome.run.id, outcome.wait!.timeoutMs, signal),
              ),
              outcome.wait.returnReply,
            )
          : describeOutcome(outcome);
      // A caller that left while waiting has nothing to be answered (its request is recorded as 499).
      if (res.destroyed) return;
      if (status === 204) {
        res.writeHead(204);
        res.end();
      } else {
        sendJson(res, status, body);
      }
    } catch (error) {
      if (error instanceof RequestError && error.code === 'signature_invalid')
        countFailure(entry.client, deps.clock.now());
      fail(req, res, entry, error);
    }
  };

  return (req, res, expectsContinue = false) => {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q === -1 ? url : url.slice(0, q);

    if (path === '/healthz') {
      if (refuseUnlessGetOrHead(req, res)) return;
      const ready = deps.isReady();
      sendJson(res, ready ? 200 : 503, ready ? HEALTH_OK : '{"ok":false,"code":"unavailable"}');
      return;
    }
    if (deps.admin !== undefined && (path === '/admin' || path.startsWith('/admin/'))) {
      deps.admin(req, res, expectsContinue);
      return;
    }
    const route = deps.routes?.get(path);
    if (route !== undefined) {
      route(req, res, expectsContinue);
      return;
    }
    const settings = deps.settings();
    const prefix = `${settings.hooks.path}/`;
    const client = deps.clientAddress(req.socket.remoteAddress, req.headers['x-forwarded-for']);
    // The access line and the request record keep a long path (up to Node's 16 KB request line) cut short.
    const entry: Exchange = { method: req.method ?? '', path: clipLogged(path), hook: null, client, code: null };
    const startedAt = deps.clock.now();
    // One listener for all that follows a request's end: the access line, the request log, metrics.
    // `on`, not `once`: a response closes once, and a listener left on it goes with it.
    res.on('close', () => {
      const status = res.headersSent ? res.statusCode : null;
      access.write(entry, status, deps.clock.now() - startedAt);
      entry.observed?.end(status);
      deps.onAnswered?.(entry.hook, status);
    });
    if (!settings.hooks.enabled || !path.startsWith(prefix)) {
      fail(req, res, entry, new RequestError('not_found'), expectsContinue);
      return;
    }
    // One trailing slash is tolerated: `/hooks/wake/` is `/hooks/wake`.
    let name = path.slice(prefix.length);
    if (name.endsWith('/')) name = name.slice(0, -1);
    entry.hook = clipLogged(name);
    entry.observed = deps.observer?.begin(entry);
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
      fail(
        req,
        res,
        entry,
        new RequestError('rate_limited', { retryAfterSeconds: lock.retryAfterSeconds }),
        expectsContinue,
      );
      return;
    }
    // A mapping with `verify` is authenticated by its signature instead of the token; which
    // mappings may serve this name is known from the path, before the body is read.
    const candidates = settings.signatures.candidatesFor(name);
    const tokenOk = settings.verifyToken(extractToken(req.headers));
    if (!tokenOk && candidates.length === 0) {
      countFailure(client, now);
      fail(req, res, entry, new RequestError('unauthorized'), expectsContinue);
      return;
    }
    if (!deps.isReady()) {
      fail(req, res, entry, new RequestError('unavailable'), expectsContinue);
      return;
    }
    void handleHook(req, res, entry, settings, name, tokenOk ? undefined : candidates, expectsContinue);
  };
}
