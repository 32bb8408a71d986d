import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { RequestError } from '../common/errors.js';
import { createIds } from '../common/ids.js';
import { newEvent, newRun } from '../../test/helpers/store-records.js';
import type { IngressStore, RequestLog, RequestRecord } from '../store/index.js';
import { createRequestRecorder, REFUSAL_BURST, REFUSALS_PER_SECOND } from './create-request-recorder.js';

/** A store that logs the order writes are queued in; nothing commits until `commit()`. */
function fakeStore() {
  const queued: string[] = [];
  const records: RequestRecord[] = [];
  const store: IngressStore & RequestLog = {
    addSystemEvent: async (e) => void queued.push(`event ${e.id}`),
    enqueueRun: async (r) => void queued.push(`run ${r.id}`),
    recordActions: async () => ({ skippedItems: [], coalesced: {} }),
    findIdempotencyKey: async () => null,
    recordRequest: async (r) => {
      queued.push(`request ${r.status}`);
      records.push({ ...r });
    },
    listRequests: async () => records,
    getRequest: async () => null,
  };
  return { store, queued, records };
}

const req = { method: 'POST', path: '/hooks/wake', hook: 'wake', client: '10.0.0.7' };

function recorder(store: IngressStore & RequestLog, recordPayloads = false) {
  let t = 0;
  return createRequestRecorder({
    store,
    recordPayloads,
    ids: createIds(),
    clock: { now: () => 1_000, sleep: async () => undefined },
    elapsedMs: () => (t += 2),
    onError: (e) => assert.fail(String(e)),
  });
}

describe('createRequestRecorder', () => {
  it("queues an accepted wake's record right after its event, in the same turn, and writes nothing more at close", async () => {
    const { store, queued, records } = fakeStore();
    const obs = recorder(store);
    const seen = obs.begin(req);
    const event = newEvent('hi');
    const committed = seen.ingress().addSystemEvent(event);
    assert.deepEqual(queued, [`event ${event.id}`, 'request 200'], 'both queued before any await');
    await committed;
    seen.end(200);
    assert.equal(records.length, 1);
    assert.deepEqual(
      { hook: records[0]!.hook, eventIds: records[0]!.eventIds, client: records[0]!.client, at: records[0]!.at },
      { hook: 'wake', eventIds: [event.id], client: '10.0.0.7', at: 1_000 },
    );
  });

  it("keeps REFUSAL_BURST refusals' records at once, then REFUSALS_PER_SECOND; accepted requests and 5xx always", () => {
    const { store, records } = fakeStore();
    let now = 1_000;
    let dropped = 0;
    const obs = createRequestRecorder({
      store,
      recordPayloads: false,
      ids: createIds(),
      clock: { now: () => now, sleep: async () => undefined },
      onError: (e) => assert.fail(String(e)),
      onDropped: () => void dropped++,
    });
    const refuse = (status: number): void => {
      const seen = obs.begin(req);
      seen.noteError(new RequestError(status === 401 ? 'unauthorized' : 'rate_limited'));
      seen.end(status);
    };
    for (let i = 0; i < REFUSAL_BURST + 100; i++) refuse(i % 2 === 0 ? 401 : 429);
    assert.equal(records.length, REFUSAL_BURST);
    assert.equal(dropped, 100);
    // Still flooding: what is kept follows the rate.
    now += 2_000;
    for (let i = 0; i < 1000; i++) refuse(401);
    assert.equal(records.length, REFUSAL_BURST + 2 * REFUSALS_PER_SECOND);
    assert.equal(dropped, 100 + 1000 - 2 * REFUSALS_PER_SECOND);
    // Accepted requests and the gateway's own failures are recorded whatever the refusals did.
    const accepted = obs.begin(req);
    void accepted.ingress().addSystemEvent(newEvent('kept'));
    accepted.end(200);
    const failed = obs.begin(req);
    failed.noteError(new RequestError('internal_error'));
    failed.end(500);
    assert.deepEqual(
      records.slice(-2).map((r) => r.status),
      [200, 500],
    );
  });

  it('records an accepted run as 202 with its id', () => {
    const { store, records } = fakeStore();
    const obs = recorder(store);
    const seen = obs.begin({ ...req, path: '/hooks/agent', hook: 'agent' });
    const run = newRun('hook:x');
    void seen.ingress().enqueueRun(run);
    seen.end(202);
    assert.deepEqual(
      records.map((r) => [r.status, r.runIds]),
      [[202, [run.id]]],
    );
  });

  it('records a rejection at close with its code and reason naming the fields', () => {
    const { store, records } = fakeStore();
    const obs = recorder(store, true);
    const seen = obs.begin(req);
    seen.noteBody(Buffer.from('{"mode":"later"}'), {});
    seen.noteError(
      new RequestError('invalid_payload', { issues: [{ path: 'mode', message: 'must be "now" or "next-heartbeat"' }] }),
    );
    seen.end(400);
    assert.equal(records.length, 1);
    assert.equal(records[0]!.code, 'invalid_payload');
    assert.equal(records[0]!.reason, 'Payload is invalid. mode: must be "now" or "next-heartbeat"');
    assert.equal(records[0]!.payload, '{"mode":"later"}');
    assert.equal(records[0]!.durationMs, 2);
  });

  it('keeps no payload unless recordPayloads is on', () => {
    const { store, records } = fakeStore();
    const obs = recorder(store, false);
    const seen = obs.begin(req);
    seen.noteBody(Buffer.from('{"text":"secret"}'), { 'x-github-event': 'push' });
    seen.end(204);
    assert.equal(records[0]!.payload, null);
    assert.equal(records[0]!.headers, null);
  });

  it('keeps the headers with the payload, without those carrying credentials', () => {
    const { store, records } = fakeStore();
    const seen = recorder(store, true).begin(req);
    seen.noteBody(Buffer.from('{}'), {
      'x-github-event': 'push',
      authorization: 'Bearer hook-token',
      cookie: 'session=1',
      'x-hookgate-token': 'hook-token',
      'x-openclaw-token': 'hook-token',
      'proxy-authorization': 'Basic eDp5',
    });
    seen.end(204);
    assert.deepEqual(records[0]!.headers, { 'x-github-event': 'push' });
  });

  it('rewrites the record when the action did not commit, without the ids it never created', () => {
    const { store, records } = fakeStore();
    const obs = recorder(store);
    const seen = obs.begin(req);
    void seen.ingress().addSystemEvent(newEvent('x'));
    seen.noteError(Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' }));
    seen.end(503);
    assert.equal(records.length, 2);
    assert.equal(records[1]!.id, records[0]!.id, 'same record, replaced');
    assert.deepEqual([records[1]!.status, records[1]!.code, records[1]!.eventIds], [503, 'store_unavailable', []]);
  });

  it('names the run a coalesced run joined, and not the ids of items recorded before, once the store answers', async () => {
    const { store, records } = fakeStore();
    const [a, b, c] = [newRun('s1'), newRun('s2'), newRun('s3')];
    const e = newEvent('dup');
    store.recordActions = async () => ({ skippedItems: [1], coalesced: { [b.id]: a.id } });
    const trace = recorder(store).begin({ ...req, path: '/hooks/pr', hook: 'pr' });
    const group = (runs: (typeof a)[], events: (typeof e)[] = []) => ({ events, runs, idempotency: null });
    await trace.ingress().recordActions({ ...group([a]), items: [group([b]), group([c], [e])] });
    await Promise.resolve();
    assert.deepEqual(records[0]!.runIds, [a.id, b.id, c.id], 'queued with the action, before the store answered');
    assert.deepEqual(records.at(-1)!.runIds, [a.id]);
    assert.deepEqual(records.at(-1)!.eventIds, []);
    trace.end(202);
    assert.deepEqual(records.at(-1)!.runIds, [a.id], 'the answer changes nothing more');
  });

  it('records 499 client_closed when the client left before the answer', () => {
    const { store, records } = fakeStore();
    const obs = recorder(store);
    const seen = obs.begin(req);
    seen.end(null);
    assert.deepEqual([records[0]!.status, records[0]!.code], [499, 'client_closed']);
  });

  it('names the action a client that left before its answer still created, and not one whose commit then failed', async () => {
    const { store, records } = fakeStore();
    const obs = recorder(store);
    const kept = obs.begin(req);
    const event = newEvent('kept');
    const committed = kept.ingress().addSystemEvent(event);
    kept.end(null);
    await committed;
    assert.deepEqual(
      [records.at(-1)!.status, records.at(-1)!.code, records.at(-1)!.eventIds],
      [499, 'client_closed', [event.id]],
    );

    let fail!: (error: Error) => void;
    store.addSystemEvent = () => new Promise<void>((_, reject) => (fail = reject));
    const lost = obs.begin(req);
    const failing = lost.ingress().addSystemEvent(newEvent('lost'));
    lost.end(null);
    assert.equal(records.at(-1)!.eventIds.length, 1, 'named while its commit is pending');
    fail(new Error('database or disk is full'));
    await failing.catch(() => undefined);
    assert.equal(records.at(-1)!.id, records.at(-2)!.id, 'the same record, rewritten');
    assert.deepEqual([records.at(-1)!.status, records.at(-1)!.eventIds], [499, []]);
  });

  it('reports a batch that failed once, however many of its records share it, and each failed batch', async () => {
    const { store } = fakeStore();
    let batch = Promise.reject(new Error('disk full'));
    store.recordRequest = () => batch;
    const errors: string[] = [];
    const obs = createRequestRecorder({
      store,
      recordPayloads: false,
      ids: createIds(),
      clock: { now: () => 1_000, sleep: async () => undefined },
      onError: (e) => void errors.push((e as Error).message),
    });
    for (let i = 0; i < 3; i++) obs.begin(req).end(404);
    batch = Promise.reject(new Error('locked'));
    obs.begin(req).end(404);
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(errors, ['disk full', 'locked']);
  });

  it('records durations to the microsecond', () => {
    const { store, records } = fakeStore();
    const times = [10, 10.123456789];
    const obs = createRequestRecorder({
      store,
      recordPayloads: false,
      ids: createIds(),
      clock: { now: () => 1_000, sleep: async () => undefined },
      elapsedMs: () => times.shift()!,
      onError: (e) => assert.fail(String(e)),
    });
    obs.begin(req).end(404);
    assert.equal(records[0]!.durationMs, 0.123);
  });
});
