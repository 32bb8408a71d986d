import { it, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { createStoreFixture, describeEachDriver, type StoreFixture } from '../../../test/helpers/store-fixture.js';
import { completion, newDelivery, newEvent, newRun } from '../../../test/helpers/store-records.js';
import type { Store } from '../store.js';
import type { WorkSignal } from '../types.js';

describeEachDriver('store contract: lockouts and work signals', (driver) => {
  let f: StoreFixture;
  let store: Store;
  const failure = (client: string) =>
    store.recordAuthFailure({ client, windowMs: 60_000, maxFailures: 3, lockoutMs: 300_000 });
  beforeEach(async () => {
    f = await createStoreFixture(driver);
    store = f.store;
  });
  afterEach(() => f.dispose());

  /** Collects signals until `done` says enough (notifications from a database arrive asynchronously). */
  const collect = () => {
    const seen: WorkSignal[] = [];
    const off = store.subscribe((s) => seen.push(s));
    return {
      seen,
      off,
      async until(pred: (s: WorkSignal[]) => boolean): Promise<void> {
        for (let i = 0; i < 200 && !pred(seen); i++) await sleep(10);
        assert.ok(pred(seen), `signals seen: ${JSON.stringify(seen)}`);
      },
    };
  };

  it('locks a client out once it reaches maxFailures within the window, until the lockout ends', async () => {
    assert.equal(await failure('1.2.3.4'), null);
    assert.equal(await failure('1.2.3.4'), null);
    assert.equal(await failure('5.6.7.8'), null, 'clients are counted apart');
    const until = await failure('1.2.3.4');
    assert.equal(until, f.clock.now() + 300_000);
    assert.deepEqual(await store.listLockouts(100), [{ client: '1.2.3.4', lockedUntil: until }]);
    await f.clock.advance(300_001);
    assert.deepEqual(await store.listLockouts(100), []);
    assert.equal(await failure('1.2.3.4'), null, 'a clean window after the lockout');
  });

  it('lists at most the lockouts asked for, those that end last first', async () => {
    const lock = async (client: string): Promise<number> => {
      await failure(client);
      await failure(client);
      const until = (await failure(client))!;
      await f.clock.advance(1000);
      return until;
    };
    const [a, b, c] = [await lock('10.0.0.1'), await lock('10.0.0.2'), await lock('10.0.0.3')];
    assert.ok(a < b && b < c);
    assert.deepEqual(await store.listLockouts(2), [
      { client: '10.0.0.3', lockedUntil: c },
      { client: '10.0.0.2', lockedUntil: b },
    ]);
    assert.equal((await store.listLockouts(100)).length, 3);
  });

  it('forgets failures that slid out of the window', async () => {
    await failure('c');
    await failure('c');
    await f.clock.advance(60_001);
    assert.equal(await failure('c'), null);
    assert.equal(await failure('c'), null);
    assert.notEqual(await failure('c'), null);
  });

  it('the lockout holds for every store on the same database', async () => {
    // A SQLite database has one gateway; a CLI writer stands in for the second process there.
    const replica = await f.open(driver === 'sqlite' ? 'write' : 'serve');
    await failure('9.9.9.9');
    await replica.recordAuthFailure({ client: '9.9.9.9', windowMs: 60_000, maxFailures: 3, lockoutMs: 300_000 });
    assert.notEqual(await failure('9.9.9.9'), null);
    assert.deepEqual(
      (await replica.listLockouts(100)).map((l) => l.client),
      ['9.9.9.9'],
    );
  });

  it('announces new runs, deliveries, heartbeats asked for now and lockouts after they commit', async () => {
    const s = collect();
    await store.addSystemEvent(newEvent('later', { mode: 'next-heartbeat' }));
    await store.addSystemEvent(newEvent('now', { agentId: 'ops', sessionKey: 'agent:ops:main' }));
    await store.enqueueRun(newRun('s'));
    await store.addDelivery(newDelivery());
    for (let i = 0; i < 3; i++) await failure('x');
    await s.until((seen) => seen.some((x) => x.kind === 'lockout'));
    assert.ok(s.seen.some((x) => x.kind === 'heartbeat' && x.agentId === 'ops'));
    assert.ok(
      !s.seen.some((x) => x.kind === 'heartbeat' && x.agentId === 'main'),
      'a next-heartbeat event asks for nothing',
    );
    assert.ok(s.seen.some((x) => x.kind === 'runs'));
    assert.ok(s.seen.some((x) => x.kind === 'deliveries'));
    const lock = s.seen.find((x) => x.kind === 'lockout');
    assert.deepEqual(lock, { kind: 'lockout', client: 'x', lockedUntil: f.clock.now() + 300_000 });
    s.off();
  });

  it("announces a finished run, its delivery and its summary's heartbeat, then its delivery's end", async () => {
    await store.enqueueRun(newRun('s'));
    const [c] = await store.claimRuns({ owner: 'w', limit: 1, leaseMs: 1000 });
    const s = collect();
    const done = completion(c!);
    await store.completeRun(done);
    await s.until(
      (seen) =>
        seen.some((x) => x.kind === 'deliveries') &&
        seen.some((x) => x.kind === 'heartbeat') &&
        seen.some((x) => x.kind === 'finished' && x.runId === c!.id),
    );
    assert.equal((await store.getRunDelivery(c!.id))?.id, done.delivery!.id);
    assert.equal(await store.getRunDelivery('nope'), null);
    s.seen.length = 0;
    const [d] = await store.claimDueDeliveries({ owner: 'w', limit: 1, leaseMs: 1000, now: f.clock.now() });
    await store.recordDeliveryAttempt({
      claimId: d!.claimId,
      deliveryId: d!.id,
      attempt: 1,
      at: 20,
      status: 200,
      error: null,
      outcome: 'sent',
      resolvedChannel: 'telegram',
      resolvedTo: '42',
      partsSent: 1,
      nextAttemptAt: null,
      lastRoute: null,
    });
    await s.until((seen) => seen.some((x) => x.kind === 'finished' && x.runId === c!.id));
    s.off();
  });

  it('stops calling a listener once unsubscribed', async () => {
    const s = collect();
    s.off();
    await store.enqueueRun(newRun('s'));
    await sleep(50);
    assert.deepEqual(s.seen, []);
  });
});
