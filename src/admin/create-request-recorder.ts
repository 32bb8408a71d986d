import type { ServerResponse } from 'node:http';
import type { Clock } from '../common/clock.js';
import type { Ids } from '../common/ids.js';
import type { RequestObserver } from '../http/index.js';
import type { IngressStore, RequestLog, RequestRecord } from '../store/index.js';
import { describeRejection } from './describe-rejection.js';

export interface RequestRecorderDeps {
  store: IngressStore & RequestLog;
  /** Keep bodies in the records (`gateway.recordPayloads`). @default false */
  recordPayloads: boolean;
  clock: Clock;
  ids: Ids;
  /** A monotonic clock in ms for durations. @default performance.now */
  elapsedMs?: () => number;
  /** Records older than this are pruned as new ones arrive. @default 7 days */
  retentionMs?: number;
  /** A record could not be written (it never fails the request). */
  onError: (error: unknown) => void;
}

interface Trace extends RequestRecord {
  startedMs: number;
  /** The status of the record already queued with the request's action, if any. */
  queuedStatus: number | null;
  error: unknown;
}

/** The status a client that left before its answer is recorded with (nginx's convention). */
const CLIENT_CLOSED = 499;
/**
 * Every this many records, the oldest past the retention are pruned, at most PRUNE_LIMIT at once:
 * ten times the rate records arrive, so the log stays bounded at any load, with no timer to run.
 */
const PRUNE_EVERY = 1_000;
const PRUNE_LIMIT = 10_000;
const DEFAULT_RETENTION_MS = 7 * 24 * 3_600_000;

/**
 * Records every hook request, accepted or not. An accepted request's record is queued beside its
 * action (through `ingress`), so both land in one group commit; every other record is written when
 * the response closes, batched with whatever else that turn commits.
 */
export function createRequestRecorder(deps: RequestRecorderDeps): RequestObserver {
  const { store } = deps;
  const elapsedMs = deps.elapsedMs ?? (() => performance.now());
  const traces = new WeakMap<ServerResponse, Trace>();
  const retentionMs = deps.retentionMs ?? DEFAULT_RETENTION_MS;
  let sincePrune = 0;

  const write = (t: Trace): void => {
    const record: RequestRecord = {
      id: t.id, at: t.at, method: t.method, path: t.path, hook: t.hook, client: t.client, status: t.status, code: t.code,
      reason: t.reason, durationMs: t.durationMs, eventIds: t.eventIds, runIds: t.runIds, payload: t.payload,
    };
    store.recordRequest(record).catch(deps.onError);
    if (++sincePrune >= PRUNE_EVERY) {
      sincePrune = 0;
      store.pruneRequests({ before: deps.clock.now() - retentionMs, limit: PRUNE_LIMIT }).catch(deps.onError);
    }
  };
  const queueWithAction = (t: Trace, status: number, eventIds: string[], runIds: string[]): void => {
    t.status = status;
    t.eventIds = eventIds;
    t.runIds = runIds;
    t.durationMs = elapsedMs() - t.startedMs;
    t.queuedStatus = status;
    write(t);
  };
  const close = (res: ServerResponse, t: Trace): void => {
    const answered = res.headersSent;
    const status = answered ? res.statusCode : CLIENT_CLOSED;
    if (t.queuedStatus === status && t.error === undefined) return;
    t.status = status;
    t.durationMs = elapsedMs() - t.startedMs;
    if (t.error !== undefined) Object.assign(t, describeRejection(t.error));
    else if (!answered) Object.assign(t, { code: 'client_closed', reason: 'The client closed the connection before the answer.' });
    // The action was not committed after all (the store failed): the record says what the client got.
    if (t.queuedStatus !== null && status >= 300) Object.assign(t, { eventIds: [], runIds: [] });
    write(t);
  };

  return {
    begin(res, { method, path, hook, client }) {
      const t: Trace = {
        id: deps.ids.next(), at: deps.clock.now(), method, path, hook: hook === '' ? null : hook, client,
        status: 0, code: null, reason: null, durationMs: 0, eventIds: [], runIds: [], payload: null,
        startedMs: elapsedMs(), queuedStatus: null, error: undefined,
      };
      traces.set(res, t);
      res.once('close', () => close(res, t));
    },
    noteBody(res, raw) {
      const t = traces.get(res);
      if (t !== undefined && deps.recordPayloads) t.payload = raw.toString('utf8');
    },
    noteError(res, error) {
      const t = traces.get(res);
      if (t !== undefined) t.error = error;
    },
    ingress(res) {
      const t = traces.get(res);
      if (t === undefined) return undefined;
      return {
        addSystemEvent(event) {
          const committed = store.addSystemEvent(event);
          queueWithAction(t, 200, [event.id], []);
          return committed;
        },
        enqueueRun(run) {
          const committed = store.enqueueRun(run);
          queueWithAction(t, 202, [], [run.id]);
          return committed;
        },
        recordActions(actions) {
          const committed = store.recordActions(actions);
          queueWithAction(t, actions.runs.length > 0 ? 202 : 200, actions.events.map((e) => e.id), actions.runs.map((r) => r.id));
          return committed;
        },
        findIdempotencyKey: (hook, key) => store.findIdempotencyKey(hook, key),
      };
    },
  };
}
