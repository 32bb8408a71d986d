import { it, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { createStoreFixture, describeEachDriver, type StoreFixture } from '../../../test/helpers/store-fixture.js';
import { MAIN, newDelivery, newEvent, turn } from '../../../test/helpers/store-records.js';
import type { Store } from '../store.js';
import type { HeartbeatClaim, HeartbeatTurn } from '../types.js';

describeEachDriver('store contract: heartbeat queue', (driver) => {
  let f: StoreFixture;
  let store: Store;
  const take = (owner = 'w1', leaseMs = 1000) => store.claimHeartbeat({ agentId: 'main', owner, leaseMs });
  const heartbeat = (claim: HeartbeatClaim, consumed: string[], o: Partial<HeartbeatTurn> = {}): HeartbeatTurn => ({
    claimId: claim.claimId,
    sessionKey: MAIN,
    agentId: 'main',
    consumedEventIds: consumed,
    transcript: turn(MAIN, 't1', 50),
    delivery: null,
    at: 50,
    ...o,
  });
  beforeEach(async () => {
    f = await createStoreFixture(driver);
    store = f.store;
  });
  afterEach(() => f.dispose());

  it("gives an agent's heartbeat lease to one claimant at a time, per agent", async () => {
    const a = await take('w1');
    assert.ok(a);
    assert.equal(a.agentId, 'main');
    assert.equal(await take('w2'), null);
    assert.ok(await store.claimHeartbeat({ agentId: 'ops', owner: 'w2', leaseMs: 1000 }), 'another agent is free');
    await store.releaseHeartbeat(a);
    assert.ok(await take('w2'), 'free again once released');
  });

  it('lets a new claimant take a lease that expired, and fences the old one out', async () => {
    const old = await take('w1', 10);
    await f.clock.advance(11);
    const fresh = await take('w2');
    assert.ok(fresh);
    assert.equal(await store.renewHeartbeat(old!, 1000), false);
    assert.equal(await store.recordHeartbeatTurn(heartbeat(old!, [])), false);
    assert.equal(await store.renewHeartbeat(fresh, 1000), true);
  });

  it('renewing keeps a lease from expiring', async () => {
    const c = await take('w1', 10);
    await f.clock.advance(8);
    assert.equal(await store.renewHeartbeat(c!, 10), true);
    await f.clock.advance(8);
    assert.equal(await take('w2'), null);
  });

  it('marks exactly the consumed events with the turn, with its transcript and delivery, and keeps later ones pending', async () => {
    const e1 = newEvent('one');
    const e2 = newEvent('two');
    await store.addSystemEvent(e1);
    await store.addSystemEvent(e2);
    const c = await take();
    const e3 = newEvent('three');
    await store.addSystemEvent(e3);
    const d = newDelivery({ channel: 'last', to: null });
    assert.equal(await store.recordHeartbeatTurn(heartbeat(c!, [e1.id, e2.id], { delivery: d })), true);
    assert.deepEqual(
      (await store.listPendingEvents(MAIN)).map((e) => e.id),
      [e3.id],
    );
    const consumed = (await store.listSystemEvents())
      .filter((e) => e.consumedAt !== null)
      .map((e) => e.id)
      .sort();
    assert.deepEqual(consumed, [e1.id, e2.id].sort());
    const session = await store.getSession(MAIN);
    assert.equal(session?.transcriptEntries, 2);
    assert.equal(session?.pendingEvents, 1);
    assert.equal(session?.updatedAt, 50);
    assert.equal((await store.getDelivery(d.id))?.state, 'pending');
  });

  it('refuses a turn whose events another turn already consumed, writing nothing', async () => {
    const e1 = newEvent('one');
    const e2 = newEvent('two');
    await store.addSystemEvent(e1);
    await store.addSystemEvent(e2);
    const c = await take();
    assert.equal(await store.recordHeartbeatTurn(heartbeat(c!, [e1.id])), true);
    const d = newDelivery();
    assert.equal(
      await store.recordHeartbeatTurn(heartbeat(c!, [e1.id, e2.id], { delivery: d, transcript: turn(MAIN, 't2') })),
      false,
    );
    assert.deepEqual(
      (await store.listPendingEvents(MAIN)).map((e) => e.id),
      [e2.id],
      'e2 stays pending',
    );
    assert.equal(await store.getDelivery(d.id), null);
    assert.equal((await store.readTranscript(MAIN)).length, 2, 'only the first turn was written');
  });

  it('returns agents whose lease expired unreleased, once, and frees them', async () => {
    const c = await take('w1', 10);
    await store.claimHeartbeat({ agentId: 'ops', owner: 'w1', leaseMs: 10_000 });
    assert.deepEqual(await store.recoverExpiredHeartbeats(), []);
    await f.clock.advance(11);
    assert.deepEqual(await store.recoverExpiredHeartbeats(), ['main']);
    assert.deepEqual(await store.recoverExpiredHeartbeats(), []);
    assert.equal(await store.renewHeartbeat(c!, 10), false, 'the dead claim is gone');
    assert.ok(await take('w2'));
  });

  it("refuses a periodic claim within minIntervalMs of the agent's last recorded turn", async () => {
    const c = await take();
    assert.equal(await store.recordHeartbeatTurn(heartbeat(c!, [])), true);
    await store.releaseHeartbeat(c!);
    const periodic = { agentId: 'main', owner: 'w2', leaseMs: 1000, minIntervalMs: 60_000 };
    assert.equal(await store.claimHeartbeat(periodic), null, 'a turn ran moments ago');
    const asked = await store.claimHeartbeat({ agentId: 'main', owner: 'w2', leaseMs: 1000 });
    assert.ok(asked, 'a requested turn is not held back');
    await store.releaseHeartbeat(asked);
    await f.clock.advance(60_001);
    assert.ok(await store.claimHeartbeat(periodic), 'free once the interval passed');
    assert.ok(
      await store.claimHeartbeat({ agentId: 'ops', owner: 'w', leaseMs: 1000, minIntervalMs: 60_000 }),
      'an agent with no turn yet',
    );
  });

  it('a released lease is never reported as expired', async () => {
    const c = await take('w1', 10);
    await store.releaseHeartbeat(c!);
    await f.clock.advance(11);
    assert.deepEqual(await store.recoverExpiredHeartbeats(), []);
  });
});
