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
 * Records every hook request, accepted or not. An accepted request's record is queued beside its
 * action (through `ingress`), so both land in one group commit; every other record is written when
 * the response closes, batched with whatever else that turn commits.
 */
export function createRequestRecorder(deps: RequestRecorderDeps): RequestObserver {
  const { store } = deps;
  const elapsedMs = deps.elapsedMs ?? (() => performance.now());
  const traces = new WeakMap<ServerResponse, Trace>();

  const write = (t: Trace): void => {
    const record: RequestRecord = {
      id: t.id, at: t.at, method: t.method, path: t.path, hook: t.hook, client: t.client, status: t.status, code: t.code,
      reason: t.reason, durationMs: t.durationMs, eventIds: t.eventIds, runIds: t.runIds, payload: t.payload,
    };
    store.recordRequest(record).catch(deps.onError);
  };
  const queueWithAction = <T>(t: Trace, committed: Promise<T>, status: number, eventIds: string[], runIds: string[]): Promise<T> => {
    t.status = status;
    t.eventIds = eventIds;
    t.runIds = runIds;
    t.durationMs = elapsedMs() - t.startedMs;
    t.queuedStatus = status;
    write(t);
    // Registered before the hook handler's own reaction: by the time the answer closes, the trace
    // knows the action was not recorded (a duplicate key, a failed store), and the record is redone.
    committed.catch(() => {
      t.queuedStatus = null;
      t.eventIds = [];
      t.runIds = [];
    });
    return committed;
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
        addSystemEvent: (event) => queueWithAction(t, store.addSystemEvent(event), 200, [event.id], []),
        enqueueRun: (run) => queueWithAction(t, store.enqueueRun(run), 202, [], [run.id]),
        recordActions: (actions) => {
          const all = [actions, ...(actions.items ?? [])];
          const eventIds = all.flatMap((a) => a.events.map((e) => e.id));
          const runIds = all.flatMap((a) => a.runs.map((r) => r.id));
          return queueWithAction(t, store.recordActions(actions), runIds.length > 0 ? 202 : 200, eventIds, runIds);
        },
        findIdempotencyKey: (hook, key) => store.findIdempotencyKey(hook, key),
      };
    },
  };
}
