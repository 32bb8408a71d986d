import { it, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { createStoreFixture, describeEachDriver, type StoreFixture } from '../../../test/helpers/store-fixture.js';
import { completion, MAIN, newDelivery, newEvent, newRun } from '../../../test/helpers/store-records.js';
import type { RunState } from '../types.js';
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
    assert.deepEqual(listed, [
      { ...b, consumedAt: null },
      { ...a, consumedAt: null },
    ]);
    assert.equal((await store.listSystemEvents({ limit: 1 })).length, 1);
  });

  it('records runs as queued with every field, and lists them newest first, by state', async () => {
    const r1 = newRun('hook:1', { to: null, model: null, thinking: null, deliver: false, timeoutSeconds: 1.5 });
    const r2 = newRun('hook:2');
    await store.enqueueRun(r1);
    await store.enqueueRun(r2);
    const got = await store.getRun(r1.id);
    assert.deepEqual(got, {
      ...r1,
      state: 'queued',
      attempts: 0,
      modelUsed: null,
      leaseOwner: null,
      leaseUntil: null,
      startedAt: null,
      finishedAt: null,
      reply: null,
      error: null,
      tokens: null,
      heldReason: null,
    });
    assert.deepEqual(
      (await store.listRuns()).map((r) => r.id),
      [r2.id, r1.id],
    );
    assert.deepEqual(
      (await store.listRuns({ state: 'queued', limit: 1 })).map((r) => r.id),
      [r2.id],
    );
    assert.deepEqual(await store.listRuns({ state: 'running' }), []);
    assert.equal(await store.getRun('nope'), null);
  });

  it('lists runs and deliveries of each state apart, newest first, and none of a state there is not', async () => {
    const runs = Array.from({ length: 5 }, (_, i) => newRun(`hook:l${i}`));
    for (const r of runs) await store.enqueueRun(r);
    const claimed = await store.claimRuns({ owner: 'w', limit: 4, leaseMs: 60_000 });
    const outcome: RunState[] = ['succeeded', 'failed', 'succeeded'];
    for (const [i, state] of outcome.entries()) {
      const c = claimed.find((r) => r.id === runs[i]!.id)!;
      assert.equal(
        await store.completeRun(completion(c, { state: state as 'succeeded' | 'failed', delivery: null })),
        true,
      );
    }
    const ids = async (state?: string) =>
      (await store.listRuns(state === undefined ? {} : { state: state as RunState })).map((r) => r.id);
    assert.deepEqual(await ids('succeeded'), [runs[2]!.id, runs[0]!.id]);
    assert.deepEqual(await ids('failed'), [runs[1]!.id]);
    assert.deepEqual(await ids('running'), [runs[3]!.id]);
    assert.deepEqual(await ids('queued'), [runs[4]!.id]);
    assert.deepEqual(await ids('timed_out'), []);
    assert.deepEqual(await ids("queued' OR 1=1 --"), [], 'a state no run can have lists nothing');
    assert.deepEqual(
      await ids(),
      [...runs].reverse().map((r) => r.id),
    );

    const ds = Array.from({ length: 3 }, () => newDelivery());
    for (const d of ds) await store.addDelivery(d);
    const [c0, c1] = await store.claimDueDeliveries({ owner: 'w', now: 1, limit: 2, leaseMs: 60_000 });
    const done = (c: typeof c0, outcome: 'sent' | 'failed') =>
      store.recordDeliveryAttempt({
        claimId: c!.claimId,
        deliveryId: c!.id,
        attempt: 1,
        at: 20,
        status: null,
        error: null,
        outcome,
        resolvedChannel: 'telegram',
        resolvedTo: '42',
        partsSent: 1,
        nextAttemptAt: null,
        lastRoute: null,
      });
    assert.equal(await done(c0, 'sent'), true);
    assert.equal(await done(c1, 'failed'), true);
    const dids = async (state: string) => (await store.listDeliveries({ state: state as 'sent' })).map((d) => d.id);
    assert.deepEqual(await dids('sent'), [ds[0]!.id]);
    assert.deepEqual(await dids('failed'), [ds[1]!.id]);
    assert.deepEqual(await dids('pending'), [ds[2]!.id]);
    assert.deepEqual(await dids('skipped'), []);
    assert.deepEqual(await dids('lost'), []);
  });

  it('has committed a write by the time its promise resolves (another connection sees it)', async () => {
    const e = newEvent('seen');
    await store.addSystemEvent(e);
    const reader = await f.open('read');
    assert.deepEqual(
      (await reader.listSystemEvents()).map((x) => x.id),
      [e.id],
    );
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
    const results = await Promise.allSettled([
      store.addSystemEvent({ ...e, text: 'dup' }),
      store.addSystemEvent(other),
    ]);
    assert.equal(results[0].status, 'rejected');
    assert.equal(results[1].status, 'fulfilled');
    assert.deepEqual(
      (await store.listSystemEvents()).map((x) => x.text),
      ['other', 'first'],
    );
  });

  it('lists pending events of a session oldest first, and whether one asks for a heartbeat now', async () => {
    const later = newEvent('later', { mode: 'next-heartbeat' });
    const now = newEvent('now');
    await store.addSystemEvent(later);
    assert.equal(await store.hasPendingNowEvent(MAIN), false);
    await store.addSystemEvent(now);
    await store.addSystemEvent(newEvent('elsewhere', { agentId: 'ops', sessionKey: 'agent:ops:main' }));
    assert.equal(await store.hasPendingNowEvent(MAIN), true);
    assert.deepEqual(
      (await store.listPendingEvents(MAIN)).map((e) => e.text),
      ['later', 'now'],
    );
    assert.deepEqual(
      (await store.listPendingEvents(MAIN, { limit: 1 })).map((e) => e.text),
      ['later'],
    );
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
    assert.deepEqual(
      (await store.listSessions()).map((s) => s.key),
      [MAIN, 'hook:abc'],
    );
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
    const entries = [1, 2, 3, 4].map((n) => ({
      sessionKey: 's',
      role: 'user' as const,
      content: `m${n}`,
      turnId: 't',
      createdAt: n,
    }));
    assert.equal(
      await store.recordHeartbeatTurn({
        claimId: claim!.claimId,
        sessionKey: 's',
        agentId: 'main',
        consumedEventIds: [],
        transcript: entries,
        delivery: null,
        at: 5,
      }),
      true,
    );
    assert.deepEqual(
      (await store.readTranscript('s', { limit: 2 })).map((t) => t.content),
      ['m3', 'm4'],
    );
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
      ...d1,
      state: 'pending',
      attempts: 0,
      error: null,
      updatedAt: d1.createdAt,
      resolvedChannel: null,
      resolvedTo: null,
      partsSent: 0,
      nextAttemptAt: null,
      sentAt: null,
      attemptLog: [],
    });
    assert.deepEqual(
      (await store.listDeliveries()).map((d) => d.id),
      [d2.id, d1.id],
    );
    assert.deepEqual(await store.listDeliveries({ state: 'failed' }), []);
    assert.equal(await store.getDelivery('nope'), null);
  });

  it('refuses writes through a read-only store, and reads beside the serving one', async () => {
    const reader = await f.open('read');
    await assert.rejects(reader.addSystemEvent(newEvent('no')));
    await store.addSystemEvent(newEvent('yes'));
    assert.deepEqual(
      (await reader.listSystemEvents()).map((e) => e.text),
      ['yes'],
    );
  });
});
