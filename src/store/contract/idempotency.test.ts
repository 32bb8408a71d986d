import { it, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { createStoreFixture, describeEachDriver, type StoreFixture } from '../../../test/helpers/store-fixture.js';
import { MAIN, newEvent, newRun } from '../../../test/helpers/store-records.js';
import { DuplicateRequestError } from '../duplicate-request-error.js';
import type { Store } from '../store.js';
import type { IdempotencyRecord, WorkSignal } from '../types.js';

describeEachDriver('store contract: recorded actions and idempotency keys', (driver) => {
  let f: StoreFixture;
  let store: Store;
  const key = (k: string, o: Partial<IdempotencyRecord> = {}): IdempotencyRecord => ({
    hook: 'github',
    key: k,
    status: 202,
    body: '{"ok":true,"runId":"r1"}',
    createdAt: f.clock.now(),
    expiresAt: f.clock.now() + 60_000,
    ...o,
  });
  beforeEach(async () => {
    f = await createStoreFixture(driver);
    store = f.store;
  });
  afterEach(() => f.dispose());

  it('records many wakes and runs of one request together, and announces them', async () => {
    const seen: WorkSignal[] = [];
    store.subscribe((s) => seen.push(s));
    const events = [newEvent('a'), newEvent('b', { mode: 'next-heartbeat' })];
    const runs = Array.from({ length: 100 }, (_, i) => newRun(`hook:${i}`));
    await store.recordActions({ events, runs, idempotency: null });
    assert.equal((await store.listPendingEvents(MAIN)).length, 2);
    assert.equal((await store.listRuns({ state: 'queued', limit: 1000 })).length, 100);
    for (
      let i = 0;
      i < 100 && !(seen.some((s) => s.kind === 'runs') && seen.some((s) => s.kind === 'heartbeat'));
      i++
    ) {
      await new Promise((r) => setTimeout(r, 10));
    }
    assert.ok(seen.some((s) => s.kind === 'runs'));
    assert.ok(seen.some((s) => s.kind === 'heartbeat' && s.agentId === 'main'));
  });

  it('keeps the first answer under a key and refuses a repeat within the window, writing nothing', async () => {
    const first = key('delivery-1');
    await store.recordActions({ events: [], runs: [newRun('s')], idempotency: first });
    assert.deepEqual(await store.findIdempotencyKey('github', 'delivery-1'), first);
    const again = newRun('s2');
    await assert.rejects(
      store.recordActions({ events: [], runs: [again], idempotency: key('delivery-1', { body: '{}' }) }),
      DuplicateRequestError,
    );
    assert.equal(await store.getRun(again.id), null);
    assert.deepEqual(await store.findIdempotencyKey('github', 'delivery-1'), first, 'the first answer stays');
  });

  it("keeps a key's body fingerprint with its answer, and a new one when the key is claimed again after its window", async () => {
    const first = key('order-7', { fingerprint: 'sha256:aa' });
    await store.recordActions({ events: [newEvent('a')], runs: [], idempotency: first });
    assert.deepEqual(await store.findIdempotencyKey('github', 'order-7'), first);
    await f.clock.advance(61_000);
    const later = key('order-7', { fingerprint: 'sha256:bb' });
    await store.recordActions({ events: [newEvent('b')], runs: [], idempotency: later });
    assert.deepEqual((await store.findIdempotencyKey('github', 'order-7'))?.fingerprint, 'sha256:bb');
  });

  it('scopes keys per hook', async () => {
    await store.recordActions({ events: [newEvent('x')], runs: [], idempotency: key('k') });
    await store.recordActions({ events: [newEvent('y')], runs: [], idempotency: key('k', { hook: 'stripe' }) });
    assert.equal((await store.listSystemEvents()).length, 2);
    assert.equal(await store.findIdempotencyKey('other', 'k'), null);
  });

  it('forgets a key once its window passed, and takes it again', async () => {
    await store.recordActions({
      events: [newEvent('x')],
      runs: [],
      idempotency: key('k', { expiresAt: f.clock.now() + 10 }),
    });
    await f.clock.advance(11);
    assert.equal(await store.findIdempotencyKey('github', 'k'), null);
    await store.recordActions({
      events: [newEvent('y')],
      runs: [],
      idempotency: key('k', { body: '{"second":true}' }),
    });
    assert.equal((await store.findIdempotencyKey('github', 'k'))?.body, '{"second":true}');
  });

  it('lets exactly one of concurrent requests with the same key in', async () => {
    const results = await Promise.allSettled(
      Array.from({ length: 5 }, (_, i) =>
        store.recordActions({ events: [newEvent(`try ${i}`)], runs: [], idempotency: key('race') }),
      ),
    );
    assert.equal(results.filter((r) => r.status === 'fulfilled').length, 1);
    assert.ok(
      results
        .filter((r) => r.status === 'rejected')
        .every((r) => (r as PromiseRejectedResult).reason instanceof DuplicateRequestError),
    );
    assert.equal((await store.listSystemEvents()).length, 1);
  });

  it('holds a key across a reopen', async () => {
    await store.recordActions({ events: [newEvent('x')], runs: [], idempotency: key('kept') });
    await store.close();
    const again = await f.open('serve');
    await assert.rejects(
      again.recordActions({ events: [newEvent('y')], runs: [], idempotency: key('kept') }),
      DuplicateRequestError,
    );
  });

  it("records a fanned-out request's items together, skipping items whose own key was seen", async () => {
    const first = await store.recordActions({
      events: [],
      runs: [],
      idempotency: null,
      items: [
        { events: [newEvent('item a')], runs: [], idempotency: key('item:a') },
        { events: [newEvent('item b')], runs: [], idempotency: key('item:b') },
      ],
    });
    assert.deepEqual(first, { skippedItems: [], coalesced: {} });
    const second = await store.recordActions({
      events: [],
      runs: [],
      idempotency: key('request-2'),
      items: [
        { events: [newEvent('item b again')], runs: [], idempotency: key('item:b') },
        { events: [], runs: [newRun('s-c')], idempotency: key('item:c') },
      ],
    });
    assert.deepEqual(second, { skippedItems: [0], coalesced: {} });
    assert.deepEqual((await store.listSystemEvents()).map((e) => e.text).sort(), ['item a', 'item b']);
    assert.equal((await store.listRuns()).length, 1);
  });

  it('refuses a repeated request whole, its items included', async () => {
    await store.recordActions({
      events: [],
      runs: [],
      idempotency: key('req'),
      items: [{ events: [newEvent('x')], runs: [], idempotency: null }],
    });
    await assert.rejects(
      store.recordActions({
        events: [],
        runs: [],
        idempotency: key('req'),
        items: [{ events: [newEvent('y')], runs: [], idempotency: key('item:y') }],
      }),
      DuplicateRequestError,
    );
    assert.deepEqual(
      (await store.listSystemEvents()).map((e) => e.text),
      ['x'],
    );
    assert.equal(await store.findIdempotencyKey('github', 'item:y'), null, 'nothing of the refused request was kept');
  });
});
