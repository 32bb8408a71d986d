import { it, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { createStoreFixture, describeEachDriver, type StoreFixture } from '../../../test/helpers/store-fixture.js';
import { MAIN, newEvent, source, turn } from '../../../test/helpers/store-records.js';
import type { Store } from '../store.js';

describeEachDriver('store contract: backlog digests', (driver) => {
  let f: StoreFixture;
  let store: Store;
  beforeEach(async () => {
    f = await createStoreFixture(driver);
    store = f.store;
  });
  afterEach(() => f.dispose());

  const flood = async (): Promise<string[]> => {
    const ids: string[] = [];
    const events = [
      ...Array.from({ length: 120 }, (_, i) =>
        newEvent(`New email from alice@example.com #${i}`, { source: { ...source, hook: 'gmail' } }),
      ),
      ...Array.from({ length: 30 }, (_, i) =>
        newEvent(`Build ${i} failed on main`, { source: { ...source, hook: 'ci' } }),
      ),
      newEvent('Door opened', { source: { ...source, hook: 'home' } }),
    ];
    await store.recordActions({ events, runs: [], idempotency: null });
    ids.push(...events.map((e) => e.id));
    return ids;
  };

  it('counts a backlog by hook, groups alike events with a sample, and shows the newest', async () => {
    const ids = await flood();
    assert.equal(await store.digestPending('agent:none:main', { groups: 5, newest: 3 }), null);
    const d = await store.digestPending(MAIN, { groups: 5, newest: 3 });
    assert.ok(d);
    assert.equal(d.total, 151);
    assert.equal(d.throughId, ids.at(-1));
    assert.deepEqual(d.byHook, [
      { hook: 'gmail', count: 120 },
      { hook: 'ci', count: 30 },
      { hook: 'home', count: 1 },
    ]);
    assert.deepEqual(
      d.groups.map((g) => [g.sample.source.hook, g.count]),
      [
        ['gmail', 120],
        ['ci', 30],
        ['home', 1],
      ],
    );
    assert.equal(d.groups[0]!.sample.text, 'New email from alice@example.com #119');
    assert.deepEqual(
      d.newest.map((e) => e.text),
      ['Door opened', 'Build 29 failed on main', 'Build 28 failed on main'],
    );
  });

  it('consumes the whole backlog up to the digest in one turn, and not what came after', async () => {
    await flood();
    const d = (await store.digestPending(MAIN, { groups: 5, newest: 3 }))!;
    const late = newEvent('arrived after the digest');
    await store.addSystemEvent(late);
    const c = await store.claimHeartbeat({ agentId: 'main', owner: 'w', leaseMs: 1000 });
    assert.equal(
      await store.recordHeartbeatTurn({
        claimId: c!.claimId,
        sessionKey: MAIN,
        agentId: 'main',
        consumedEventIds: [],
        consumeThrough: { eventId: d.throughId, count: d.total },
        transcript: turn(MAIN, 'digest'),
        delivery: null,
        at: 9,
      }),
      true,
    );
    assert.deepEqual(
      (await store.listPendingEvents(MAIN)).map((e) => e.id),
      [late.id],
    );
  });

  it('refuses a digest turn when the backlog changed under it, writing nothing', async () => {
    await flood();
    const d = (await store.digestPending(MAIN, { groups: 5, newest: 3 }))!;
    const c = await store.claimHeartbeat({ agentId: 'main', owner: 'w', leaseMs: 1000 });
    assert.equal(
      await store.recordHeartbeatTurn({
        claimId: c!.claimId,
        sessionKey: MAIN,
        agentId: 'main',
        consumedEventIds: [],
        consumeThrough: { eventId: d.throughId, count: d.total + 1 },
        transcript: turn(MAIN, 'digest'),
        delivery: null,
        at: 9,
      }),
      false,
    );
    assert.equal((await store.listPendingEvents(MAIN)).length, 151);
    assert.deepEqual(await store.readTranscript(MAIN), []);
  });
});
