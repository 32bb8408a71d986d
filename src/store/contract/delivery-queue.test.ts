import { it, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { createStoreFixture, describeEachDriver, type StoreFixture } from '../../../test/helpers/store-fixture.js';
import { MAIN, newDelivery } from '../../../test/helpers/store-records.js';
import type { Store } from '../store.js';
import type { ClaimedDelivery, DeliveryAttemptResult } from '../types.js';

describeEachDriver('store contract: delivery queue', (driver) => {
  let f: StoreFixture;
  let store: Store;
  const claim = (o: { owner?: string; limit?: number; leaseMs?: number; now?: number } = {}) =>
    store.claimDueDeliveries({
      owner: o.owner ?? 'w1',
      limit: o.limit ?? 10,
      leaseMs: o.leaseMs ?? 1000,
      now: o.now ?? f.clock.now(),
    });
  const attempt = (d: ClaimedDelivery, o: Partial<DeliveryAttemptResult>): DeliveryAttemptResult => ({
    claimId: d.claimId,
    deliveryId: d.id,
    attempt: d.attempts + 1,
    at: 20,
    status: null,
    error: null,
    outcome: 'sent',
    resolvedChannel: 'telegram',
    resolvedTo: '42',
    partsSent: 1,
    nextAttemptAt: null,
    lastRoute: null,
    ...o,
  });
  beforeEach(async () => {
    f = await createStoreFixture(driver);
    store = f.store;
  });
  afterEach(() => f.dispose());

  it('claims pending deliveries oldest first, each once while its lease holds', async () => {
    const d1 = newDelivery();
    const d2 = newDelivery();
    await store.addDelivery(d1);
    await store.addDelivery(d2);
    const first = await claim({ limit: 1 });
    assert.deepEqual(
      first.map((d) => d.id),
      [d1.id],
    );
    assert.equal(typeof first[0]!.claimId, 'string');
    assert.deepEqual(
      (await claim({ owner: 'w2' })).map((d) => d.id),
      [d2.id],
    );
    assert.deepEqual(await claim({ owner: 'w3' }), []);
  });

  it('records a sent attempt under the current claim, with the last route when asked', async () => {
    const d = newDelivery();
    await store.addDelivery(d);
    const [c] = await claim();
    assert.equal(
      await store.recordDeliveryAttempt(
        attempt(c!, {
          lastRoute: { sessionKey: MAIN, agentId: 'main', channel: 'telegram', to: '42' },
        }),
      ),
      true,
    );
    const got = await store.getDelivery(d.id);
    assert.deepEqual(
      [got?.state, got?.attempts, got?.sentAt, got?.resolvedChannel, got?.resolvedTo],
      ['sent', 1, 20, 'telegram', '42'],
    );
    assert.deepEqual(got?.attemptLog, [
      { deliveryId: d.id, attempt: 1, at: 20, status: null, error: null, outcome: 'sent' },
    ]);
    assert.deepEqual(await store.getLastRoute(MAIN), { channel: 'telegram', to: '42' });
    assert.equal(await store.recordDeliveryAttempt(attempt(c!, {})), false, 'the claim ended with the attempt');
    assert.deepEqual(await claim(), []);
  });

  it('keeps a retry pending until it falls due, with progress kept', async () => {
    const d = newDelivery();
    await store.addDelivery(d);
    const [c] = await claim();
    assert.equal(
      await store.recordDeliveryProgress({
        deliveryId: d.id,
        claimId: c!.claimId,
        partsSent: 1,
        resolvedChannel: 'telegram',
        resolvedTo: '42',
        at: 15,
      }),
      true,
    );
    assert.equal(
      await store.recordDeliveryAttempt(
        attempt(c!, { outcome: 'retry', status: 429, error: 'slow down', partsSent: 1, nextAttemptAt: 5000 }),
      ),
      true,
    );
    assert.deepEqual(await claim({ now: 4999 }), []);
    const [again] = await claim({ now: 5000 });
    assert.deepEqual([again?.id, again?.attempts, again?.partsSent, again?.state], [d.id, 1, 1, 'pending']);
  });

  it('claims new deliveries and due retries oldest first, the retry due soonest first among many, past a backlog not due', async () => {
    const ds = Array.from({ length: 6 }, () => newDelivery());
    for (const d of ds) await store.addDelivery(d);
    const claimed = await claim({ limit: 6 });
    // ds[0..3] wait for retries: ds[1] due first, then ds[0], ds[2]; ds[3] not for long. ds[4], ds[5] fail for good.
    const due = [2000, 1000, 3000, 900_000];
    for (const [i, at] of due.entries()) {
      assert.equal(
        await store.recordDeliveryAttempt(attempt(claimed[i]!, { outcome: 'retry', error: 'down', nextAttemptAt: at })),
        true,
      );
    }
    for (const c of claimed.slice(4))
      assert.equal(await store.recordDeliveryAttempt(attempt(c, { outcome: 'failed', error: 'gone' })), true);
    const fresh = newDelivery();
    await store.addDelivery(fresh);
    assert.deepEqual(
      (await claim({ now: 500 })).map((d) => d.id),
      [fresh.id],
      'no retry is due yet',
    );
    assert.deepEqual(
      (await claim({ now: 5000, limit: 1, owner: 'w2' })).map((d) => d.id),
      [ds[1]!.id],
      'of three due, the one due soonest',
    );
    assert.deepEqual(
      (await claim({ now: 5000, owner: 'w3' })).map((d) => d.id),
      [ds[0]!.id, ds[2]!.id],
      'then the rest, oldest first',
    );
  });

  it('refuses progress and attempts under a stale claim', async () => {
    const d = newDelivery();
    await store.addDelivery(d);
    const [old] = await claim({ leaseMs: 10 });
    await f.clock.advance(11);
    const [fresh] = await claim({ owner: 'w2' });
    assert.ok(fresh);
    assert.notEqual(fresh.claimId, old!.claimId);
    assert.equal(
      await store.recordDeliveryProgress({
        deliveryId: d.id,
        claimId: old!.claimId,
        partsSent: 1,
        resolvedChannel: 'x',
        resolvedTo: 'y',
        at: 1,
      }),
      false,
    );
    assert.equal(await store.recordDeliveryAttempt(attempt(old!, { outcome: 'failed', error: 'late' })), false);
    assert.deepEqual(await store.renewDeliveries([old!], 1000), []);
    assert.equal(await store.recordDeliveryAttempt(attempt(fresh, {})), true);
    assert.equal((await store.getDelivery(d.id))?.attemptLog.length, 1);
  });

  it('renewing a delivery lease keeps other workers off it', async () => {
    await store.addDelivery(newDelivery());
    const [c] = await claim({ leaseMs: 10 });
    await f.clock.advance(8);
    assert.deepEqual(await store.renewDeliveries([c!], 10), [c!.id]);
    await f.clock.advance(8);
    assert.deepEqual(await claim({ owner: 'w2' }), []);
  });

  it('requeues a failed or skipped delivery with a fresh budget, and nothing else', async () => {
    const d = newDelivery();
    await store.addDelivery(d);
    assert.equal(await store.requeueDelivery(d.id, 30), false, 'pending cannot be requeued');
    const [c] = await claim();
    await store.recordDeliveryAttempt(attempt(c!, { outcome: 'failed', status: 401, error: 'Unauthorized' }));
    assert.equal((await store.listDeliveries({ state: 'failed' })).length, 1);
    assert.equal(await store.requeueDelivery(d.id, 30), true);
    const got = await store.getDelivery(d.id);
    assert.deepEqual([got?.state, got?.attempts, got?.error], ['pending', 0, null]);
    assert.equal(got?.attemptLog.length, 1, 'the history stays');
    assert.equal((await claim({ now: 30 })).length, 1);
    assert.equal(await store.requeueDelivery('nope', 30), false);
  });

  it('records a skipped delivery with its reason', async () => {
    const d = newDelivery({ channel: 'last', to: null });
    await store.addDelivery(d);
    const [c] = await claim();
    await store.recordDeliveryAttempt(
      attempt(c!, { outcome: 'skipped', error: 'no route', resolvedChannel: null, resolvedTo: null, partsSent: 0 }),
    );
    const got = await store.getDelivery(d.id);
    assert.deepEqual([got?.state, got?.error], ['skipped', 'no route']);
  });
});
