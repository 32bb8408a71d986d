import { it, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { createStoreFixture, describeEachDriver, type StoreFixture } from '../../../test/helpers/store-fixture.js';
import { ids, MAIN, newEvent, newRequestRecord, newRun } from '../../../test/helpers/store-records.js';
import type { RequestRecord, WorkSignal } from '../index.js';
import type { Store } from '../store.js';

const request = (o: Partial<RequestRecord> = {}): RequestRecord => newRequestRecord({ at: 100, durationMs: 1.5, ...o });

describeEachDriver('store contract: request log and run cancellation', (driver) => {
  let f: StoreFixture;
  let store: Store;
  beforeEach(async () => {
    f = await createStoreFixture(driver);
    store = f.store;
  });
  afterEach(() => f.dispose());

  it('keeps every field of a request record', async () => {
    const r = request({
      eventIds: ['e1'],
      runIds: ['r1', 'r2'],
      payload: '{"text":"hi"}',
      headers: { 'x-github-event': 'push', 'content-type': 'application/json' },
      reason: null,
    });
    await store.recordRequest(r);
    assert.deepEqual(await store.getRequest(r.id), r);
    assert.deepEqual(
      (await store.listRequests({ hook: r.hook! })).find((x) => x.id === r.id),
      r,
    );
    assert.equal(await store.getRequest(ids.next()), null);
  });

  it('keeps a record whose body and reason hold a NUL, beside the writes of its batch', async () => {
    const r = request({
      status: 400,
      code: 'invalid_payload',
      reason: 'Payload is invalid. a\u0000b: must be a string',
      payload: '{"a\u0000b":1}',
    });
    const event = newEvent('beside it');
    await Promise.all([store.addSystemEvent(event), store.recordRequest(r)]);
    const kept = await store.getRequest(r.id);
    // PostgreSQL text cannot hold U+0000: it keeps U+FFFD in its place.
    const nul = driver === 'postgres' ? '\ufffd' : '\u0000';
    assert.equal(kept?.payload, `{"a${nul}b":1}`);
    assert.equal(kept?.reason, `Payload is invalid. a${nul}b: must be a string`);
    assert.deepEqual(
      (await store.listSystemEvents({ limit: 5 })).map((e) => e.id),
      [event.id],
    );
  });

  it('lists newest first, filtered by hook and status, up to the limit', async () => {
    const a = request({ hook: 'wake', status: 200 });
    const b = request({ hook: 'agent', status: 401, code: 'unauthorized', reason: 'Missing or invalid hook token.' });
    const c = request({
      hook: 'wake',
      status: 400,
      code: 'invalid_payload',
      reason: 'Payload is invalid: text: required',
    });
    for (const r of [a, b, c]) await store.recordRequest(r);
    assert.deepEqual(
      (await store.listRequests()).map((r) => r.id),
      [c.id, b.id, a.id],
    );
    assert.deepEqual(
      (await store.listRequests({ hook: 'wake' })).map((r) => r.id),
      [c.id, a.id],
    );
    assert.deepEqual(
      (await store.listRequests({ status: 401 })).map((r) => r.id),
      [b.id],
    );
    assert.deepEqual(
      (await store.listRequests({ hook: 'wake', status: 400 })).map((r) => r.code),
      ['invalid_payload'],
    );
    assert.deepEqual(
      (await store.listRequests({ limit: 1 })).map((r) => r.id),
      [c.id],
    );
  });

  it('replaces a record written again under the same id, keeping its place', async () => {
    const first = request({ status: 200, eventIds: ['e1'] });
    const later = request();
    await store.recordRequest(first);
    await store.recordRequest(later);
    await store.recordRequest({
      ...first,
      status: 503,
      code: 'store_unavailable',
      reason: 'cannot write',
      eventIds: [],
    });
    const listed = await store.listRequests();
    assert.deepEqual(
      listed.map((r) => [r.id, r.status]),
      [
        [later.id, 200],
        [first.id, 503],
      ],
    );
    assert.equal(listed[1]!.code, 'store_unavailable');
  });

  it('commits a request record queued in the same turn as its action', async () => {
    const event = newEvent('wake');
    const r = request({ eventIds: [event.id] });
    await Promise.all([store.addSystemEvent(event), store.recordRequest(r)]);
    assert.equal((await store.getRequest(r.id))?.eventIds[0], event.id);
    assert.equal((await store.listSystemEvents())[0]?.id, event.id);
  });

  it('prunes the oldest records past the retention cut-off, at most limit at a time', async () => {
    const old = [request({ at: 10 }), request({ at: 20 }), request({ at: 30 })];
    const recent = request({ at: 100 });
    for (const r of [...old, recent]) await store.recordRequest(r);
    const cutoffs = { events: 0, runs: 0, deliveries: 0, transcript: 0, requests: 100, eventLog: 0 };
    assert.equal((await store.countPrunable(cutoffs)).requests, 3);
    assert.equal((await store.prune(cutoffs, 2)).requests, 2);
    assert.deepEqual(
      (await store.listRequests()).map((r) => r.at),
      [100, 30],
    );
    assert.equal((await store.prune(cutoffs, 10)).requests, 1);
    assert.equal((await store.prune(cutoffs, 10)).requests, 0);
    assert.deepEqual(
      (await store.listRequests()).map((r) => r.id),
      [recent.id],
    );
  });

  it('cancels a queued run: failed with its error, the summary posted, work announced', async () => {
    const run = newRun('s1', { wakeMode: 'now' });
    await store.enqueueRun(run);
    const signals: WorkSignal[] = [];
    const stop = store.subscribe((s) => signals.push(s));
    const summary = newEvent('Hook agent (failed): cancelled', { mode: 'now' });
    assert.equal(await store.cancelRun({ runId: run.id, finishedAt: 50, error: 'cancelled', summary }), true);
    const got = await store.getRun(run.id);
    assert.equal(got?.state, 'failed');
    assert.equal(got?.error, 'cancelled');
    assert.equal(got?.finishedAt, 50);
    assert.deepEqual(
      (await store.listPendingEvents(MAIN)).map((e) => e.text),
      ['Hook agent (failed): cancelled'],
    );
    assert.deepEqual(
      await store.claimRuns({ owner: 'w', limit: 5, leaseMs: 1000 }),
      [],
      'a cancelled run is never claimed',
    );
    await waitFor(() => signals.some((s) => s.kind === 'runs'));
    stop();
  });

  it('refuses to cancel a run a worker claimed, or one already finished, writing nothing', async () => {
    const run = newRun('s2');
    await store.enqueueRun(run);
    await store.claimRuns({ owner: 'w', limit: 1, leaseMs: 1000 });
    const summary = newEvent('Hook agent (failed): cancelled');
    assert.equal(await store.cancelRun({ runId: run.id, finishedAt: 50, error: 'cancelled', summary }), false);
    assert.equal((await store.getRun(run.id))?.state, 'running');
    assert.deepEqual(await store.listPendingEvents(MAIN), []);
    assert.equal(
      await store.cancelRun({ runId: ids.next(), finishedAt: 50, error: 'cancelled', summary }),
      false,
      'unknown run',
    );
  });

  it('refuses to cancel twice', async () => {
    const run = newRun('s3');
    await store.enqueueRun(run);
    const cancel = () =>
      store.cancelRun({
        runId: run.id,
        finishedAt: 50,
        error: 'cancelled',
        summary: newEvent('Hook agent (failed): cancelled'),
      });
    assert.equal(await cancel(), true);
    assert.equal(await cancel(), false);
    assert.equal((await store.listPendingEvents(MAIN)).length, 1);
  });
});

/** Signals from a shared store arrive over the network; wait for them briefly, without a timing assertion. */
async function waitFor(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !condition(); i++) await new Promise((r) => setTimeout(r, 10));
  assert.ok(condition(), 'condition never held');
}
