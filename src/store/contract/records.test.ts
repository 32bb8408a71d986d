import { it, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { createStoreFixture, describeEachDriver, type StoreFixture } from '../../../test/helpers/store-fixture.js';
import { MAIN, newDelivery, newEvent, newRun } from '../../../test/helpers/store-records.js';
import type { Store } from '../store.js';

describeEachDriver('store contract: records and reads', (driver) => {
  let f: StoreFixture;
  let store: Store;
  beforeEach(async () => {
    f = await createStoreFixture(driver);
    store = f.store;
  });
  afterEach(() => f.dispose());

  it('records events and lists them newest first, with every field', async () => {
    const a = newEvent('one', { mode: 'next-heartbeat' });
    const b = newEvent('two', { source: { hook: 'github', external: true, allowUnsafeExternalContent: true } });
    await store.addSystemEvent(a);
    await store.addSystemEvent(b);
    const listed = await store.listSystemEvents();
    assert.deepEqual(listed, [{ ...b, consumedAt: null }, { ...a, consumedAt: null }]);
    assert.equal((await store.listSystemEvents({ limit: 1 })).length, 1);
  });

  it('records runs as queued with every field, and lists them newest first, by state', async () => {
    const r1 = newRun('hook:1', { to: null, model: null, thinking: null, deliver: false, timeoutSeconds: 1.5 });
    const r2 = newRun('hook:2');
    await store.enqueueRun(r1);
    await store.enqueueRun(r2);
    const got = await store.getRun(r1.id);
    assert.deepEqual(got, {
      ...r1, state: 'queued', attempts: 0, modelUsed: null, leaseOwner: null, leaseUntil: null, startedAt: null,
      finishedAt: null, reply: null, error: null, tokens: null, heldReason: null,
    });
    assert.deepEqual((await store.listRuns()).map((r) => r.id), [r2.id, r1.id]);
    assert.deepEqual((await store.listRuns({ state: 'queued', limit: 1 })).map((r) => r.id), [r2.id]);
    assert.deepEqual(await store.listRuns({ state: 'running' }), []);
    assert.equal(await store.getRun('nope'), null);
  });

  it('has committed a write by the time its promise resolves (another connection sees it)', async () => {
    const e = newEvent('seen');
    await store.addSystemEvent(e);
    const reader = await f.open('read');
    assert.deepEqual((await reader.listSystemEvents()).map((x) => x.id), [e.id]);
  });

  it('keeps every record across a reopen', async () => {
    const e = newEvent('kept');
    const r = newRun('hook:k');
    await store.addSystemEvent(e);
    await store.enqueueRun(r);
    await store.close();
    const again = await f.open('serve');
    assert.equal((await again.listSystemEvents())[0]?.id, e.id);
    assert.equal((await again.getRun(r.id))?.state, 'queued');
  });

  it('fails a duplicate id alone, committing the rest of its batch', async () => {
    const e = newEvent('first');
    await store.addSystemEvent(e);
    const other = newEvent('other');
    const results = await Promise.allSettled([store.addSystemEvent({ ...e, text: 'dup' }), store.addSystemEvent(other)]);
    assert.equal(results[0].status, 'rejected');
    assert.equal(results[1].status, 'fulfilled');
    assert.deepEqual((await store.listSystemEvents()).map((x) => x.text), ['other', 'first']);
  });

  it('lists pending events of a session oldest first, and whether one asks for a heartbeat now', async () => {
    const later = newEvent('later', { mode: 'next-heartbeat' });
    const now = newEvent('now');
    await store.addSystemEvent(later);
    assert.equal(await store.hasPendingNowEvent(MAIN), false);
    await store.addSystemEvent(now);
    await store.addSystemEvent(newEvent('elsewhere', { agentId: 'ops', sessionKey: 'agent:ops:main' }));
    assert.equal(await store.hasPendingNowEvent(MAIN), true);
    assert.deepEqual((await store.listPendingEvents(MAIN)).map((e) => e.text), ['later', 'now']);
    assert.deepEqual((await store.listPendingEvents(MAIN, { limit: 1 })).map((e) => e.text), ['later']);
  });

  it('keeps the last route and lists sessions, including ones that only have events or runs', async () => {
    await store.addSystemEvent(newEvent('x'));
    await store.enqueueRun(newRun('hook:abc'));
    assert.equal(await store.getLastRoute(MAIN), null);
    await store.setLastRoute(MAIN, 'main', 'telegram', '123', 70);
    assert.deepEqual(await store.getLastRoute(MAIN), { channel: 'telegram', to: '123' });
    const main = await store.getSession(MAIN);
    assert.equal(main?.lastChannel, 'telegram');
    assert.equal(main?.lastTo, '123');
    assert.equal(main?.pendingEvents, 1);
    assert.equal(main?.updatedAt, 70);
    assert.deepEqual((await store.listSessions()).map((s) => s.key), [MAIN, 'hook:abc']);
    assert.equal((await store.getSession('hook:abc'))?.agentId, 'main');
    assert.equal(await store.getSession('nope'), null);
  });

  it('lists the sessions touched last, then the keys only events or runs know, by key, up to the limit', async () => {
    const s = store;
    await s.enqueueRun(newRun('hook:zeta'));
    await s.enqueueRun(newRun('hook:alpha'));
    await s.addSystemEvent(newEvent('pending', { agentId: 'ops', sessionKey: 'agent:ops:main' }));
    await s.setLastRoute('hook:old', 'main', 'telegram', '1', 10);
    await s.setLastRoute('hook:new', 'main', 'telegram', '2', 30);
    await s.setLastRoute('hook:alpha', 'main', 'slack', 'C1', 20);
    const keys = async (limit: number) => (await s.listSessions({ limit })).map((x) => x.key);
    assert.deepEqual(await keys(10), ['hook:new', 'hook:alpha', 'hook:old', 'agent:ops:main', 'hook:zeta']);
    assert.deepEqual(await keys(2), ['hook:new', 'hook:alpha']);
    assert.deepEqual(await keys(4), ['hook:new', 'hook:alpha', 'hook:old', 'agent:ops:main']);
    assert.equal((await s.getSession('agent:ops:main'))?.agentId, 'ops');
    assert.equal((await s.getSession('hook:zeta'))?.pendingEvents, 0);
  });

  it('returns the last N transcript entries of a session oldest first', async () => {
    const claim = await store.claimHeartbeat({ agentId: 'main', owner: 'w', leaseMs: 1000 });
    const entries = [1, 2, 3, 4].map((n) => ({ sessionKey: 's', role: 'user' as const, content: `m${n}`, turnId: 't', createdAt: n }));
    assert.equal(await store.recordHeartbeatTurn({
      claimId: claim!.claimId, sessionKey: 's', agentId: 'main', consumedEventIds: [], transcript: entries, delivery: null, at: 5,
    }), true);
    assert.deepEqual((await store.readTranscript('s', { limit: 2 })).map((t) => t.content), ['m3', 'm4']);
    assert.equal((await store.readTranscript('s')).length, 4);
    assert.deepEqual(await store.readTranscript('other'), []);
    assert.equal((await store.getSession('s'))?.transcriptEntries, 4);
  });

  it('records deliveries as pending and lists them newest first, by state, with their attempts', async () => {
    const d1 = newDelivery({ to: null, channel: 'last' });
    const d2 = newDelivery();
    await store.addDelivery(d1);
    await store.addDelivery(d2);
    const got = await store.getDelivery(d1.id);
    assert.deepEqual(got, {
      ...d1, state: 'pending', attempts: 0, error: null, updatedAt: d1.createdAt, resolvedChannel: null, resolvedTo: null,
      partsSent: 0, nextAttemptAt: null, sentAt: null, attemptLog: [],
    });
    assert.deepEqual((await store.listDeliveries()).map((d) => d.id), [d2.id, d1.id]);
    assert.deepEqual((await store.listDeliveries({ state: 'failed' })), []);
    assert.equal(await store.getDelivery('nope'), null);
  });

  it('refuses writes through a read-only store, and reads beside the serving one', async () => {
    const reader = await f.open('read');
    await assert.rejects(reader.addSystemEvent(newEvent('no')));
    await store.addSystemEvent(newEvent('yes'));
    assert.deepEqual((await reader.listSystemEvents()).map((e) => e.text), ['yes']);
  });
});
