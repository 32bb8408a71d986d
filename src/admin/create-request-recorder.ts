import type { Clock } from '../common/clock.js';
import type { Ids } from '../common/ids.js';
import { keepText, type Scrub } from '../common/scrub-secrets.js';
import type { IncomingHttpHeaders } from 'node:http';
import { safeHeaders } from '../hooks/index.js';
import type { ObservedRequest, RequestObserver } from '../http/index.js';
import type {
  IngressStore,
  NewRun,
  NewSystemEvent,
  RecordedActions,
  RequestLog,
  RequestRecord,
} from '../store/index.js';
import { describeRejection } from './describe-rejection.js';

interface RequestRecorderDeps {
  store: IngressStore & RequestLog;
  /** Keep bodies in the records (`gateway.recordPayloads`). @default false */
  recordPayloads: boolean;
  clock: Clock;
  ids: Ids;
  /** A monotonic clock in ms for durations. @default performance.now */
  elapsedMs?: () => number;
  /** A record could not be written (it never fails the request). */
  onError: (error: unknown) => void;
  /** A refusal's record was not kept: refusals came faster than `REFUSALS_PER_SECOND` (metrics). */
  onDropped?: () => void;
  /** Applied to a rejection's reason before it is stored: a transform's or a store's error can echo a secret. @default keepText */
  scrub?: Scrub;
}

/**
 * Records of refused requests (4xx) kept per second, on average, with bursts of `REFUSAL_BURST`:
 * a flood of refusals (wrong tokens, unknown paths, a client locked out) would otherwise write a
 * record each for as long as it lasts, bounded by the retention's time only. Accepted requests and
 * the gateway's own failures (5xx) are always recorded; the access log and metrics count them all.
 */
export const REFUSALS_PER_SECOND = 50;
export const REFUSAL_BURST = 500;

/** The status a client that left before its answer is recorded with (nginx's convention). */
const CLIENT_CLOSED = 499;
const NONE: readonly string[] = Object.freeze([]);

type Shared = Required<Pick<RequestRecorderDeps, 'store' | 'recordPayloads' | 'elapsedMs' | 'scrub'>> & {
  /** Takes one refusal record from the budget; false when it is spent. */
  takeRefusal: () => boolean;
  onDropped: () => void;
  /**
   * Reports a record's failure through `onError`. Records gathered into one batch share its
   * promise (SQLite): it is watched once, not once a record.
   */
  watch: (written: Promise<void>) => void;
};

/**
 * One request's record as it forms. It is also the store the hook handler records the request's
 * action through, so the record is queued right behind the action (on PostgreSQL in the same group
 * commit; SQLite gathers records into batches). Every request on the hot path costs one of these
 * and nothing else.
 */
class Trace implements ObservedRequest, IngressStore {
  status = 0;
  code: string | null = null;
  reason: string | null = null;
  durationMs = 0;
  eventIds: readonly string[] = NONE;
  runIds: readonly string[] = NONE;
  payload: string | null = null;
  headers: Readonly<Record<string, string>> | null = null;
  /** Said of the request whatever its answer (an operator's replay). */
  note: string | null = null;
  /** The status of the record already queued with the request's action, if any. */
  private queuedStatus: number | null = null;
  /** The response has closed (`end`). */
  private ended = false;
  private error: unknown = undefined;
  private readonly startedMs: number;

  constructor(
    private readonly shared: Shared,
    readonly id: string,
    readonly at: number,
    readonly method: string,
    readonly path: string,
    readonly hook: string | null,
    readonly client: string,
  ) {
    this.startedMs = shared.elapsedMs();
  }

  noteBody(raw: Buffer, headers: IncomingHttpHeaders | Readonly<Record<string, string>>): void {
    if (!this.shared.recordPayloads) return;
    this.payload = raw.toString('utf8');
    // What a replay needs to be the request it replays: a mapping may read them.
    this.headers = safeHeaders(headers);
  }

  noteError(error: unknown): void {
    this.error = error;
  }

  ingress(): IngressStore {
    return this;
  }

  addSystemEvent(event: NewSystemEvent): Promise<void> {
    return this.queueWithAction(this.shared.store.addSystemEvent(event), 200, [event.id], NONE);
  }

  enqueueRun(run: NewRun): Promise<void> {
    return this.queueWithAction(this.shared.store.enqueueRun(run), 202, NONE, [run.id]);
  }

  recordActions(actions: RecordedActions): ReturnType<IngressStore['recordActions']> {
    const all = [actions, ...(actions.items ?? [])];
    const ids = (skipped: readonly number[] = [], coalesced: Readonly<Record<string, string>> = {}) => {
      const kept = all.filter((_, i) => i === 0 || !skipped.includes(i - 1));
      return {
        eventIds: kept.flatMap((a) => [...a.events.map((e) => e.id), ...(a.published ?? []).map((e) => e.id)]),
        runIds: [...new Set(kept.flatMap((a) => a.runs.map((r) => coalesced[r.id] ?? r.id)))],
      };
    };
    const { eventIds, runIds } = ids();
    const committed = this.queueWithAction(
      this.shared.store.recordActions(actions),
      runIds.length > 0 ? 202 : 200,
      eventIds,
      runIds,
    );
    // Items recorded before (duplicates) created nothing, and a run that joined a queued run is that
    // run: once the store says so, the record names only what exists.
    void committed.then(
      ({ skippedItems, coalesced }) => {
        if (this.queuedStatus === null || (skippedItems.length === 0 && Object.keys(coalesced).length === 0)) return;
        ({ eventIds: this.eventIds, runIds: this.runIds } = ids(skippedItems, coalesced));
        this.write();
      },
      () => undefined,
    );
    return committed;
  }

  findIdempotencyKey(hook: string, key: string): ReturnType<IngressStore['findIdempotencyKey']> {
    return this.shared.store.findIdempotencyKey(hook, key);
  }

  end(answered: number | null): void {
    const status = answered ?? CLIENT_CLOSED;
    this.ended = true;
    if (this.queuedStatus === status && this.error === undefined) return;
    this.status = status;
    this.durationMs = this.elapsed();
    if (this.error !== undefined) {
      const { code, reason } = describeRejection(this.error);
      this.code = code;
      this.reason = this.shared.scrub(this.note === null ? reason : `${reason} (${this.note})`);
    } else if (answered === null) {
      this.code = 'client_closed';
      this.reason = 'The client closed the connection before the answer.';
    } else {
      this.reason = this.note;
    }
    if (this.queuedStatus === null && status >= 400 && status < 500 && !this.shared.takeRefusal()) {
      this.shared.onDropped();
      return;
    }
    // The action was not committed after all (the store failed): the record says what the client got.
    // A client that left first got nothing: its action may still commit, and the record names it
    // until the commit fails (see `queueWithAction`).
    if (this.queuedStatus !== null && answered !== null && status >= 300) {
      this.eventIds = NONE;
      this.runIds = NONE;
    }
    this.write();
  }

  private queueWithAction<T>(
    committed: Promise<T>,
    status: number,
    eventIds: readonly string[],
    runIds: readonly string[],
  ): Promise<T> {
    this.status = status;
    this.eventIds = eventIds;
    this.runIds = runIds;
    this.durationMs = this.elapsed();
    this.queuedStatus = status;
    this.write();
    // Registered before the hook handler's own reaction: by the time the answer closes, the trace
    // knows the action was not recorded (a duplicate key, a failed store), and the record is redone.
    committed.catch(() => {
      this.queuedStatus = null;
      this.eventIds = NONE;
      this.runIds = NONE;
      // The client left before the commit failed: the record written at close named what never was.
      if (this.ended) this.write();
    });
    return committed;
  }

  /** Milliseconds since the request arrived, to the microsecond (the clock's further digits are noise, and cost to encode). */
  private elapsed(): number {
    return Math.round((this.shared.elapsedMs() - this.startedMs) * 1000) / 1000;
  }

  /** Queues the record as it stands now (a snapshot: the trace may still change before the commit). */
  private write(): void {
    const record: RequestRecord = {
      id: this.id,
      at: this.at,
      method: this.method,
      path: this.path,
      hook: this.hook,
      client: this.client,
      status: this.status,
      code: this.code,
      reason: this.reason,
      durationMs: this.durationMs,
      eventIds: this.eventIds,
      runIds: this.runIds,
      payload: this.payload,
      headers: this.headers,
    };
    this.shared.watch(this.shared.store.recordRequest(record));
  }
}

/** The request log's recorder: hook requests as they arrive, and operators' replays of recorded ones. */
export interface RequestRecorder extends RequestObserver {
  /**
   * A replay of record `of` by an operator at `client`: recorded as method `REPLAY` at the hook's
   * path, its reason saying what it replays, its payload and headers kept as `recordPayloads` says.
   */
  beginReplay(of: RequestRecord, path: string, client: string): ObservedRequest;
}

/**
 * Records every hook request, accepted or not. An accepted request's record is queued as its action
 * is (through `ingress`); every other record is queued when the response closes. When they are
 * committed is the store's `RequestLog` to decide.
 */
export function createRequestRecorder(deps: RequestRecorderDeps): RequestRecorder {
  let tokens = REFUSAL_BURST;
  let filledAt = deps.clock.now();
  let watched: Promise<void> | undefined;
  const shared: Shared = {
    store: deps.store,
    recordPayloads: deps.recordPayloads,
    elapsedMs: deps.elapsedMs ?? (() => performance.now()),
    scrub: deps.scrub ?? keepText,
    takeRefusal() {
      const now = deps.clock.now();
      tokens = Math.min(REFUSAL_BURST, tokens + ((now - filledAt) / 1000) * REFUSALS_PER_SECOND);
      filledAt = now;
      if (tokens < 1) return false;
      tokens -= 1;
      return true;
    },
    onDropped: deps.onDropped ?? (() => undefined),
    watch(written) {
      if (written === watched) return;
      watched = written;
      written.catch(deps.onError);
    },
  };
  const begin: RequestObserver['begin'] = ({ method, path, hook, client }) =>
    new Trace(shared, deps.ids.next(), deps.clock.now(), method, path, hook === '' ? null : hook, client);
  return {
    begin,
    beginReplay(of, path, client) {
      const trace = new Trace(shared, deps.ids.next(), deps.clock.now(), 'REPLAY', path, of.hook, client);
      trace.note = `an operator's replay of request ${of.id}`;
      trace.reason = trace.note;
      return trace;
    },
  };
}
