import { it, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { createStoreFixture, describeEachDriver, type StoreFixture } from '../../../test/helpers/store-fixture.js';
import { MAIN, newEvent, source, turn } from '../../../test/helpers/store-records.js';
import type { Store } from '../store.js';
import type { HeartbeatTurn } from '../types.js';
import type { DigestOptions, PendingDigest } from '../maintenance-types.js';

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
    assert.equal(await store.digestPending('agent:none:main', { groups: 5, hooks: 50, newest: 3, high: 20 }), null);
    const d = await store.digestPending(MAIN, { groups: 5, hooks: 50, newest: 3, high: 20 });
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
    const d = (await store.digestPending(MAIN, { groups: 5, hooks: 50, newest: 3, high: 20 }))!;
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
    const d = (await store.digestPending(MAIN, { groups: 5, hooks: 50, newest: 3, high: 20 }))!;
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

  const SHOW: DigestOptions = { groups: 15, hooks: 50, newest: 10, high: 2 };
  const KINDS = 20;
  const PER_KIND = 60;
  const kindText = (k: number, i: number): string => `${'ABCDEFGHIJKLMNOPQRSTUVWXYZ'[k]} job ${i} finished`;
  /** One alert, then 1,200 wakes of 20 kinds interleaved: more kinds than the digest shows. */
  const alertThenFlood = async (high: readonly string[] = []): Promise<{ alert: string; high: string[] }> => {
    const alert = newEvent('Disk full on db-1', { source: { ...source, hook: 'alerts' } });
    const urgent = high.map((text) => newEvent(text, { source: { ...source, hook: 'pager', priority: 'high' } }));
    const flood = Array.from({ length: KINDS * PER_KIND }, (_, i) =>
      newEvent(kindText(i % KINDS, i), { source: { ...source, hook: 'wake' } }),
    );
    await store.recordActions({ events: [alert, ...urgent, ...flood], runs: [], idempotency: null });
    return { alert: alert.id, high: urgent.map((e) => e.id) };
  };
  /** Records a digest turn listing `listed` and consuming `through`; releases the lease after. */
  const digestTurn = async (
    listed: readonly string[],
    through: NonNullable<HeartbeatTurn['consumeThrough']>,
  ): Promise<boolean> => {
    const c = (await store.claimHeartbeat({ agentId: 'main', owner: 'w', leaseMs: 1000 }))!;
    const recorded = await store.recordHeartbeatTurn({
      claimId: c.claimId,
      sessionKey: MAIN,
      agentId: 'main',
      consumedEventIds: listed,
      consumeThrough: through,
      transcript: turn(MAIN, 'digest'),
      delivery: null,
      at: 9,
    });
    await store.releaseHeartbeat(c);
    return recorded;
  };
  /** A digest turn as the runtime builds it: the kinds shown, and the events listed one by one. */
  const consumeShown = (d: PendingDigest, listed: readonly string[]): Promise<boolean> =>
    digestTurn(listed, { eventId: d.throughId, count: d.total, kinds: d.groups.map((g) => g.kind) });

  it('shows every hook by a kind of its own, however many kinds another hook floods with', async () => {
    const { alert } = await alertThenFlood();
    const d = (await store.digestPending(MAIN, SHOW))!;
    assert.equal(d.total, 1 + KINDS * PER_KIND);
    assert.equal(d.kinds, 1 + KINDS);
    assert.equal(d.groups.length, 15);
    // Each hook's largest kind first (the wakes' newest kind of 60, then the alert), then the largest others.
    assert.deepEqual(
      d.groups.slice(0, 2).map((g) => [g.sample.source.hook, g.count]),
      [
        ['wake', PER_KIND],
        ['alerts', 1],
      ],
    );
    assert.equal(d.groups[1]!.sample.id, alert);
    assert.deepEqual(d.groups[1]!.kind, { hook: 'alerts', shape: 'Disk full on db-' });
    assert.deepEqual(
      d.groups.slice(2).map((g) => g.count),
      Array(13).fill(PER_KIND),
    );
  });

  it('consumes the kinds a digest showed and the events it listed, and keeps every other kind pending', async () => {
    await alertThenFlood();
    const d = (await store.digestPending(MAIN, SHOW))!;
    const shown = new Set(d.groups.map((g) => g.sample.text.replace(/[0-9]/g, '')));
    const listed = d.newest.map((e) => e.id);
    assert.equal(await consumeShown(d, listed), true);
    const pending = await store.listPendingEvents(MAIN, { limit: 10_000 });
    const listedSet = new Set(listed);
    // 6 wake kinds not shown, less the newest events of them, which the turn listed.
    assert.equal(
      pending.length,
      6 * PER_KIND - d.newest.filter((e) => !shown.has(e.text.replace(/[0-9]/g, ''))).length,
    );
    for (const e of pending) {
      assert.equal(shown.has(e.text.replace(/[0-9]/g, '')), false, `${e.text} was shown`);
      assert.equal(listedSet.has(e.id), false, `${e.text} was listed`);
    }
    // The next digest shows what the first one kept, and consumes it whole.
    const next = (await store.digestPending(MAIN, SHOW))!;
    assert.equal(next.total, pending.length);
    assert.equal(next.kinds, 6);
    assert.equal(next.groups.length, 6);
    assert.equal(await digestTurn([], { eventId: next.throughId, count: next.total }), true);
    assert.deepEqual(await store.listPendingEvents(MAIN), []);
  });

  it('lists high-priority events one by one, oldest first, in no kind, and keeps those not listed pending', async () => {
    const { high } = await alertThenFlood(['Pager: api down', 'Pager: api down', 'Pager: db down']);
    const d = (await store.digestPending(MAIN, SHOW))!;
    assert.deepEqual(
      d.high.map((e) => e.id),
      high.slice(0, 2),
    );
    assert.equal(d.highTotal, 3);
    assert.equal(d.total, 4 + KINDS * PER_KIND);
    assert.equal(d.kinds, 1 + KINDS, 'no kind of high-priority events');
    assert.ok(d.byHook.some((h) => h.hook === 'pager' && h.count === 3));
    assert.ok(!d.groups.some((g) => g.sample.source.hook === 'pager'));
    assert.ok(!d.newest.some((e) => e.source.hook === 'pager'));
    assert.equal(d.high[0]!.source.priority, 'high');
    assert.equal(
      await consumeShown(
        d,
        [...d.high, ...d.newest].map((e) => e.id),
      ),
      true,
    );
    const pending = await store.listPendingEvents(MAIN, { limit: 10_000 });
    assert.deepEqual(
      pending.filter((e) => e.source.hook === 'pager').map((e) => e.id),
      [high[2]],
    );
  });

  it('refuses a turn showing some kinds when the backlog changed under it, writing nothing', async () => {
    await alertThenFlood();
    const d = (await store.digestPending(MAIN, SHOW))!;
    const kinds = d.groups.map((g) => g.kind);
    assert.equal(
      await digestTurn(
        d.newest.map((e) => e.id),
        { eventId: d.throughId, count: d.total + 1, kinds },
      ),
      false,
    );
    assert.equal((await store.listPendingEvents(MAIN, { limit: 10_000 })).length, d.total);
  });
});
