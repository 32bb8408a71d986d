import { describe, it, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { createSqliteFixture, type SqliteFixture } from '../../../test/helpers/sqlite-fixture.js';
import { MAIN, newEvent, turn } from '../../../test/helpers/store-records.js';
import type { Store } from '../store.js';

describe('SQLite digest turns consume their backlog by a mark, stamped afterwards', () => {
  let f: SqliteFixture;
  beforeEach(async () => {
    // Four events a batch: the stamping of a backlog of dozens spans many commits.
    f = await createSqliteFixture({ consumeStampBatch: 4 });
  });
  afterEach(() => f.dispose());

  const backlog = async (store: Store, n: number, text: string): Promise<string[]> => {
    const events = Array.from({ length: n }, (_, i) => newEvent(`${text} ${i}`));
    await store.recordActions({ events, runs: [], idempotency: null });
    return events.map((e) => e.id);
  };
  const digestTurn = async (
    store: Store,
    turnId: string,
    at: number,
  ): Promise<{ claimId: string; recorded: boolean }> => {
    const d = (await store.digestPending(MAIN, { groups: 3, hooks: 50, newest: 3, high: 20 }))!;
    const c = (await store.claimHeartbeat({ agentId: 'main', owner: 'w', leaseMs: 60_000 }))!;
    const recorded = await store.recordHeartbeatTurn({
      claimId: c.claimId,
      sessionKey: MAIN,
      agentId: 'main',
      consumedEventIds: [],
      consumeThrough: { eventId: d.throughId, count: d.total },
      transcript: turn(MAIN, turnId),
      delivery: null,
      at,
    });
    await store.releaseHeartbeat(c);
    return { claimId: c.claimId, recorded };
  };
  const unstamped = (): number =>
    (f.raw.prepare('SELECT count(*) AS n FROM system_events WHERE consumed_at IS NULL').get() as { n: number }).n;
  const marks = (): number => (f.raw.prepare('SELECT count(*) AS n FROM consumed_marks').get() as { n: number }).n;
  const stampedBy = (): Record<string, number> =>
    Object.fromEntries(
      (
        f.raw
          .prepare('SELECT consumed_by AS turn, count(*) AS n FROM system_events GROUP BY consumed_by')
          .all() as Array<{ turn: string | null; n: number }>
      ).map((r) => [String(r.turn), r.n]),
    );
  const stamped = async (): Promise<void> => {
    for (let i = 0; i < 500 && marks() > 0; i++) await sleep(10);
    assert.equal(marks(), 0, 'every mark stamped and dropped');
  };

  it('counts the backlog consumed from the commit on, before its events are stamped', async () => {
    await backlog(f.store, 100, 'Build failed');
    assert.equal((await digestTurn(f.store, 'digest-1', 7)).recorded, true);
    // Read at once, beside the marker's first batches: most events still carry no stamp.
    assert.ok(unstamped() > 90, `${unstamped()} events unstamped`);
    assert.equal(marks(), 1);
    assert.deepEqual(await f.store.listPendingEvents(MAIN), []);
    assert.equal(await f.store.hasPendingNowEvent(MAIN), false);
    assert.equal((await f.store.readQueueStats()).pendingEvents, 0);
    assert.equal((await f.store.getSession(MAIN))!.pendingEvents, 0);
    assert.equal((await f.store.listSessions()).find((s) => s.key === MAIN)!.pendingEvents, 0);
    assert.deepEqual([...new Set((await f.store.listSystemEvents({ limit: 100 })).map((e) => e.consumedAt))], [7]);
    const late = newEvent('arrived after the turn');
    await f.store.addSystemEvent(late);
    assert.deepEqual(
      (await f.store.listPendingEvents(MAIN)).map((e) => e.id),
      [late.id],
    );
    assert.equal((await f.store.readQueueStats()).pendingEvents, 1);
    await stamped();
    assert.deepEqual(stampedBy(), { 'digest-1': 100, null: 1 });
  });

  it('stamps each event with the turn that consumed it, when turns follow before the stamping ends', async () => {
    await backlog(f.store, 60, 'first');
    await digestTurn(f.store, 'digest-1', 7);
    await backlog(f.store, 40, 'second');
    assert.equal((await f.store.digestPending(MAIN, { groups: 3, hooks: 50, newest: 3, high: 20 }))!.total, 40);
    await digestTurn(f.store, 'digest-2', 8);
    assert.deepEqual(await f.store.listPendingEvents(MAIN), []);
    await stamped();
    assert.deepEqual(stampedBy(), { 'digest-1': 60, 'digest-2': 40 });
  });

  it('refuses a listed turn over an event a mark consumed, writing nothing', async () => {
    const ids = await backlog(f.store, 60, 'Build failed');
    await digestTurn(f.store, 'digest-1', 7);
    const c = (await f.store.claimHeartbeat({ agentId: 'main', owner: 'w', leaseMs: 60_000 }))!;
    // The newest event is stamped last: still only under the mark.
    assert.equal(
      (
        f.raw.prepare('SELECT consumed_at FROM system_events WHERE id = ?').get(ids.at(-1)) as {
          consumed_at: number | null;
        }
      ).consumed_at,
      null,
    );
    assert.equal(
      await f.store.recordHeartbeatTurn({
        claimId: c.claimId,
        sessionKey: MAIN,
        agentId: 'main',
        consumedEventIds: [ids.at(-1)!],
        transcript: turn(MAIN, 'listed'),
        delivery: null,
        at: 9,
      }),
      false,
    );
    await stamped();
    assert.deepEqual(stampedBy(), { 'digest-1': 60 });
    assert.equal((await f.store.readTranscript(MAIN)).filter((t) => t.turnId === 'listed').length, 0);
  });

  it('goes on stamping at the next start when the gateway stopped in the middle', async () => {
    await backlog(f.store, 80, 'Build failed');
    await digestTurn(f.store, 'digest-1', 7);
    await f.store.close();
    assert.ok(unstamped() > 0 && marks() === 1, `${unstamped()} unstamped, ${marks()} marks`);
    const reopened = await f.open('serve');
    assert.deepEqual(await reopened.listPendingEvents(MAIN), []);
    await stamped();
    assert.deepEqual(stampedBy(), { 'digest-1': 80 });
  });

  it('stamps only the kinds a filtered mark consumed, and keeps the others pending once it is dropped', async () => {
    // Two kinds interleaved; the turn shows one of them.
    const events = Array.from({ length: 60 }, (_, i) =>
      newEvent(i % 2 === 0 ? `Build ${i} failed` : `Mail ${i} arrived`),
    );
    await f.store.recordActions({ events, runs: [], idempotency: null });
    const d = (await f.store.digestPending(MAIN, { groups: 1, hooks: 0, newest: 0, high: 0 }))!;
    assert.deepEqual(d.groups[0]!.kind, { hook: 'agent', shape: 'Mail  arrived' });
    const c = (await f.store.claimHeartbeat({ agentId: 'main', owner: 'w', leaseMs: 60_000 }))!;
    assert.equal(
      await f.store.recordHeartbeatTurn({
        claimId: c.claimId,
        sessionKey: MAIN,
        agentId: 'main',
        consumedEventIds: [],
        consumeThrough: { eventId: d.throughId, count: d.total, kinds: [d.groups[0]!.kind] },
        transcript: turn(MAIN, 'digest-1'),
        delivery: null,
        at: 7,
      }),
      true,
    );
    const builds = events.filter((_, i) => i % 2 === 0).map((e) => e.id);
    // Before the stamping ends, and after: the kind not shown is pending, the other consumed by the turn.
    for (const when of ['under the mark', 'stamped']) {
      if (when === 'stamped') await stamped();
      assert.deepEqual(
        (await f.store.listPendingEvents(MAIN, { limit: 100 })).map((e) => e.id),
        builds,
        when,
      );
      assert.equal((await f.store.readQueueStats()).pendingEvents, 30, when);
      const listed = await f.store.listSystemEvents({ limit: 100 });
      assert.deepEqual([...new Set(listed.filter((e) => !builds.includes(e.id)).map((e) => e.consumedAt))], [7], when);
      assert.deepEqual(
        [...new Set(listed.filter((e) => builds.includes(e.id)).map((e) => e.consumedAt))],
        [null],
        when,
      );
    }
    assert.deepEqual(stampedBy(), { 'digest-1': 30, null: 30 });
  });
});
