import { it, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { createStoreFixture, describeEachDriver, type StoreFixture } from '../../../test/helpers/store-fixture.js';
import { completion, enqueueAlone, MAIN, newDelivery, newEvent } from '../../../test/helpers/store-records.js';
import type { DispatchHold } from '../dispatch-holds.js';
import type { RunBudgets } from '../run-budgets.js';
import type { Store } from '../store.js';
import type { ClaimedRun, WorkSignal } from '../types.js';

const HOUR = 3_600_000;

describeEachDriver('store contract: dispatch holds', (driver) => {
  let f: StoreFixture;
  let store: Store;
  const enqueue = (o: { agentId?: string; hook?: string } = {}): Promise<string> =>
    enqueueAlone(store, f.clock.now(), o);
  const claim = (budgets?: RunBudgets, on: Store = store): Promise<ClaimedRun[]> =>
    on.claimRuns({ owner: 'w', limit: 10, leaseMs: HOUR, ...(budgets === undefined ? {} : { budgets }) });
  const hold = (h: Partial<DispatchHold> & Pick<DispatchHold, 'scope' | 'key'>): DispatchHold => ({
    kind: 'pause',
    note: null,
    at: f.clock.now(),
    ...h,
  });
  const claimDeliveries = (on: Store = store) =>
    on.claimDueDeliveries({ owner: 'w', now: f.clock.now(), limit: 10, leaseMs: HOUR });

  beforeEach(async () => {
    f = await createStoreFixture(driver);
    store = f.store;
  });
  afterEach(() => f.dispose());

  it('keeps a hold until it is lifted, and replaces one of the same scope and key', async () => {
    assert.deepEqual(await store.listHolds(), []);
    await store.setHold(hold({ scope: 'mapping', key: 'github', note: 'rotating a key' }));
    await store.setHold(hold({ scope: 'all', key: '*', kind: 'drain' }));
    await store.setHold(hold({ scope: 'mapping', key: 'github', note: 'again' }));
    assert.deepEqual(
      (await store.listHolds()).map((h) => [h.scope, h.key, h.kind, h.note]),
      [
        ['all', '*', 'drain', null],
        ['mapping', 'github', 'pause', 'again'],
      ],
    );
    assert.equal(await store.releaseHold('mapping', 'github'), true);
    assert.equal(await store.releaseHold('mapping', 'github'), false, 'nothing left to lift');
    assert.deepEqual(
      (await store.listHolds()).map((h) => h.scope),
      ['all'],
    );
  });

  it('claims no run while everything is held, and claims them once it is lifted', async () => {
    await enqueue();
    await enqueue({ agentId: 'ops' });
    await store.setHold(hold({ scope: 'all', key: '*' }));
    assert.deepEqual(await claim(), []);
    const queued = await store.listRuns({ state: 'queued' });
    assert.equal(queued.length, 2, 'the runs wait, queued');
    for (const r of queued) assert.equal(r.heldReason, 'all dispatch paused (paused)');
    await store.releaseHold('all', '*');
    assert.equal((await claim()).length, 2);
  });

  it('holds a paused agent’s and a paused mapping’s runs with the reason and claims the others', async () => {
    await store.setHold(hold({ scope: 'agent', key: 'ops', note: 'model outage' }));
    await store.setHold(hold({ scope: 'mapping', key: 'github' }));
    const free = await enqueue({ hook: 'stripe' });
    const byAgent = await enqueue({ agentId: 'ops', hook: 'stripe' });
    const byMapping = await enqueue({ hook: 'github' });
    assert.deepEqual(
      (await claim()).map((r) => r.id),
      [free],
    );
    assert.equal((await store.getRun(byAgent))?.heldReason, 'agent "ops": paused: model outage (paused)');
    assert.equal((await store.getRun(byMapping))?.heldReason, 'mapping "github": paused (paused)');
    await store.releaseHold('mapping', 'github');
    assert.deepEqual(
      (await claim()).map((r) => r.id),
      [byMapping],
    );
    assert.equal((await store.getRun(byAgent))?.heldReason, 'agent "ops": paused: model outage (paused)');
  });

  it('a pause holds runs beside budgets and its reason comes first', async () => {
    const budgets: RunBudgets = { agents: { main: { runsPerHour: 1 } }, hooks: {} };
    await store.setHold(hold({ scope: 'agent', key: 'main' }));
    const a = await enqueue();
    assert.deepEqual(await claim(budgets), []);
    assert.equal((await store.getRun(a))?.heldReason, 'agent "main": paused (paused)');
    await store.releaseHold('agent', 'main');
    assert.deepEqual(
      (await claim(budgets)).map((r) => r.id),
      [a],
      'resumed, the budget still has room for one',
    );
  });

  it('a resumed run no longer shows the pause, even before a claim passes its mark', async () => {
    await store.setHold(hold({ scope: 'mapping', key: 'github' }));
    const id = await enqueue({ hook: 'github' });
    assert.deepEqual(await claim(), [], 'the claim marks it held');
    await store.releaseHold('mapping', 'github');
    assert.equal((await store.getRun(id))?.heldReason, null);
  });

  it('holds a run handed back or requeued while it was paused', async () => {
    const id = await enqueue({ hook: 'github' });
    const [r] = await claim();
    await store.setHold(hold({ scope: 'mapping', key: 'github' }));
    assert.equal(await store.releaseRun(r!), true);
    assert.deepEqual(await claim(), []);
    assert.equal((await store.getRun(id))?.state, 'queued');
    await store.releaseHold('mapping', 'github');
    assert.equal((await claim()).length, 1);
  });

  it('claims no delivery of a held agent or of a paused mapping’s run, and every delivery once resumed', async () => {
    const runId = await enqueue({ hook: 'github' });
    const [run] = await claim();
    assert.equal(
      await store.completeRun(completion(run!, { delivery: newDelivery({ runId, text: 'from github' }) })),
      true,
    );
    await store.addDelivery(newDelivery({ agentId: 'ops', text: 'from ops' }));
    await store.addDelivery(newDelivery({ text: 'a heartbeat reply' }));
    await store.setHold(hold({ scope: 'mapping', key: 'github' }));
    await store.setHold(hold({ scope: 'agent', key: 'ops' }));
    assert.deepEqual(
      (await claimDeliveries()).map((d) => d.text),
      ['a heartbeat reply'],
    );
    await store.setHold(hold({ scope: 'all', key: '*', kind: 'drain' }));
    await store.releaseHold('mapping', 'github');
    await store.releaseHold('agent', 'ops');
    assert.deepEqual(await claimDeliveries(), [], 'a drain holds every delivery');
    await store.releaseHold('all', '*');
    assert.deepEqual((await claimDeliveries()).map((d) => d.text).sort(), ['from github', 'from ops']);
  });

  it('gives a held agent no heartbeat turn until it is resumed', async () => {
    const lease = { owner: 'w', leaseMs: HOUR };
    await store.setHold(hold({ scope: 'agent', key: 'main' }));
    assert.equal(await store.claimHeartbeat({ agentId: 'main', ...lease }), null);
    const other = await store.claimHeartbeat({ agentId: 'ops', ...lease });
    assert.notEqual(other, null, 'another agent takes its turns');
    await store.setHold(hold({ scope: 'all', key: '*' }));
    await store.releaseHold('agent', 'main');
    assert.equal(await store.claimHeartbeat({ agentId: 'main', ...lease }), null);
    await store.releaseHold('all', '*');
    assert.notEqual(await store.claimHeartbeat({ agentId: 'main', ...lease }), null);
  });

  it('counts the work in flight under a live lease', async () => {
    await store.addSystemEvent(newEvent('e', { sessionKey: MAIN }));
    await enqueue();
    await enqueue();
    await store.addDelivery(newDelivery());
    assert.deepEqual(await store.readInFlight(), { runs: 0, deliveries: 0, heartbeats: 0 });
    const runs = await store.claimRuns({ owner: 'w', limit: 10, leaseMs: 1000 });
    await store.claimDueDeliveries({ owner: 'w', now: f.clock.now(), limit: 10, leaseMs: 1000 });
    await store.claimHeartbeat({ agentId: 'main', owner: 'w', leaseMs: 1000 });
    assert.deepEqual(await store.readInFlight(), { runs: 2, deliveries: 1, heartbeats: 1 });
    assert.equal(await store.completeRun(completion(runs[0]!, { delivery: null })), true);
    assert.equal((await store.readInFlight()).runs, 1);
    await f.clock.advance(1001);
    assert.deepEqual(
      await store.readInFlight(),
      { runs: 0, deliveries: 0, heartbeats: 0 },
      'a lease that expired (its process died) is not in flight',
    );
  });

  it('a hold set through another store binds this one’s next claim, and is announced', async () => {
    const other = await f.open(driver === 'sqlite' ? 'write' : 'serve');
    const seen: WorkSignal[] = [];
    const off = store.subscribe((s) => seen.push(s));
    await enqueue();
    await other.setHold(hold({ scope: 'all', key: '*' }));
    assert.deepEqual(await claim(), []);
    if (driver === 'postgres') {
      for (let i = 0; i < 200 && !seen.some((s) => s.kind === 'holds'); i++) await sleep(10);
      assert.ok(
        seen.some((s) => s.kind === 'holds'),
        `signals seen: ${JSON.stringify(seen)}`,
      );
    }
    await other.releaseHold('all', '*');
    assert.equal((await claim()).length, 1);
    off();
  });

  it('announces a hold set and lifted in this process', async () => {
    const seen: WorkSignal[] = [];
    const off = store.subscribe((s) => seen.push(s));
    await store.setHold(hold({ scope: 'agent', key: 'main' }));
    await store.releaseHold('agent', 'main');
    for (let i = 0; i < 200 && seen.filter((s) => s.kind === 'holds').length < 2; i++) await sleep(10);
    assert.equal(seen.filter((s) => s.kind === 'holds').length, 2);
    off();
  });
});

describeEachDriver('store contract: catch-up positions', (driver) => {
  let f: StoreFixture;
  let store: Store;
  beforeEach(async () => {
    f = await createStoreFixture(driver);
    store = f.store;
  });
  afterEach(() => f.dispose());
  const lease = { owner: 'w', leaseMs: 60_000 };

  it('gives one claim at a time a mapping’s catch-up, with the position saved last', async () => {
    const first = await store.claimCatchUp({ mappingId: 'github', ...lease });
    assert.deepEqual(
      first && { cursorAt: first.cursorAt, lastId: first.lastId, resumeAfter: first.resumeAfter },
      { cursorAt: null, lastId: null, resumeAfter: null },
      'nothing saved yet',
    );
    assert.equal(await store.claimCatchUp({ mappingId: 'github', ...lease }), null, 'held by the first');
    assert.notEqual(await store.claimCatchUp({ mappingId: 'stripe', ...lease }), null, 'another mapping is apart');
    assert.equal(
      await store.saveCatchUp(first!, { cursorAt: 1000, lastId: 'evt_1', resumeAfter: 'evt_1', at: 5 }),
      true,
    );
    await store.releaseCatchUp(first!);
    const next = await store.claimCatchUp({ mappingId: 'github', ...lease });
    assert.deepEqual(next && [next.cursorAt, next.lastId, next.resumeAfter, next.updatedAt], [
      1000,
      'evt_1',
      'evt_1',
      5,
    ]);
    assert.deepEqual(
      (await store.listCatchUps()).map((c) => [c.mappingId, c.cursorAt]),
      [
        ['github', 1000],
        ['stripe', null],
      ],
    );
  });

  it('lets another claim take a lease that expired, and refuses the stale claim’s writes', async () => {
    const stale = (await store.claimCatchUp({ mappingId: 'github', ...lease }))!;
    await f.clock.advance(60_001);
    const fresh = (await store.claimCatchUp({ mappingId: 'github', ...lease }))!;
    assert.notEqual(fresh, null);
    assert.equal(await store.saveCatchUp(stale, { cursorAt: 9, lastId: null, resumeAfter: null, at: 1 }), false);
    assert.equal(await store.renewCatchUp(stale, 60_000), false);
    assert.equal(await store.renewCatchUp(fresh, 60_000), true);
    assert.equal(await store.saveCatchUp(fresh, { cursorAt: 7, lastId: 'x', resumeAfter: null, at: 2 }), true);
    await store.releaseCatchUp(stale);
    assert.equal(await store.claimCatchUp({ mappingId: 'github', ...lease }), null, 'a stale release frees nothing');
  });
});
