import { it, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { createStoreFixture, describeEachDriver, type StoreFixture } from '../../../test/helpers/store-fixture.js';
import { newSubscription } from '../../../test/helpers/store-records.js';
import { TooManySubscriptionsError } from '../log-rows.js';
import type { Store } from '../store.js';

describeEachDriver('store contract: webhook subscriptions', (driver) => {
  let f: StoreFixture;
  let store: Store;
  const limits = { maxSubscriptions: 2, now: 1 };
  beforeEach(async () => {
    f = await createStoreFixture(driver);
    store = f.store;
  });
  afterEach(() => f.dispose());

  const active = async (id: string, o: Parameters<typeof newSubscription>[1] = {}) => {
    await store.saveSubscription(newSubscription(id, o), limits);
    assert.equal(await store.activateSubscription(id, 2), true);
  };

  it('creates a subscription activating, and a repeat refreshes its secret and expiry but keeps its place', async () => {
    const first = await store.saveSubscription(newSubscription('sub_a', { cursor: 7 }), limits);
    assert.equal(first.created, true);
    assert.equal(first.subscription.state, 'activating');
    assert.equal(first.subscription.cursor, 7);
    assert.equal(await store.activateSubscription('sub_a', 2), true);
    assert.equal(await store.activateSubscription('sub_a', 3), false, 'only an activating one activates');
    const again = await store.saveSubscription(
      newSubscription('sub_a', { cursor: 0, secret: 'whsec_new', expiresAt: 99, maxAgeMs: 5 }),
      limits,
    );
    assert.equal(again.created, false);
    assert.equal(again.subscription.state, 'active');
    assert.equal(again.subscription.cursor, 7);
    assert.equal(again.subscription.secret, 'whsec_new');
    assert.equal(again.subscription.expiresAt, 99);
    assert.equal(again.subscription.maxAgeMs, 5);
  });

  it('refuses a subscription past the limit, counting none that ended', async () => {
    await active('sub_a');
    await active('sub_b');
    await assert.rejects(store.saveSubscription(newSubscription('sub_c'), limits), TooManySubscriptionsError);
    assert.equal(await store.terminateSubscription('sub_a', 'removed', 5), true);
    assert.equal((await store.saveSubscription(newSubscription('sub_c'), limits)).created, true);
    assert.deepEqual(
      (await store.listSubscriptions()).map((s) => [s.id, s.state, s.endReason]),
      [
        ['sub_a', 'terminated', 'removed'],
        ['sub_b', 'active', null],
        ['sub_c', 'activating', null],
      ],
    );
  });

  it('lets a subscription ending be replaced by a new one with the same id, which no claim holds', async () => {
    await active('sub_a', { cursor: 3 });
    await store.claimSubscriptions({ owner: 'w1', limit: 1, leaseMs: 30_000 });
    await store.terminateSubscription('sub_a', 'expired', 5);
    const renewed = await store.saveSubscription(newSubscription('sub_a', { cursor: 9 }), limits);
    assert.equal(renewed.created, true);
    assert.equal(renewed.subscription.state, 'activating');
    assert.equal(renewed.subscription.cursor, 9);
    assert.equal(renewed.subscription.endReason, null);
    assert.equal(renewed.subscription.leaseOwner, null);
    await store.activateSubscription('sub_a', 6);
    assert.equal((await store.claimSubscriptions({ owner: 'w2', limit: 1, leaseMs: 30_000 })).length, 1);
  });

  it('claims active and ending subscriptions once, never an activating one, until the lease is given up', async () => {
    await active('sub_a');
    await store.saveSubscription(newSubscription('sub_b'), limits);
    const claims = await store.claimSubscriptions({ owner: 'w1', limit: 10, leaseMs: 30_000 });
    assert.deepEqual(
      claims.map((c) => c.id),
      ['sub_a'],
    );
    assert.equal(claims[0]!.leaseOwner, 'w1');
    // A replica on PostgreSQL; SQLite has one process, so its own store claims again.
    const other = driver === 'postgres' ? await f.open() : store;
    assert.deepEqual(await other.claimSubscriptions({ owner: 'w2', limit: 10, leaseMs: 30_000 }), []);
    assert.equal(await store.releaseSubscription(claims[0]!), true);
    assert.equal((await other.claimSubscriptions({ owner: 'w2', limit: 10, leaseMs: 30_000 })).length, 1);
  });

  it('lets a claim whose lease ran out be taken, and the stale claim write nothing', async () => {
    await active('sub_a');
    const [old] = await store.claimSubscriptions({ owner: 'w1', limit: 1, leaseMs: 1_000 });
    await f.clock.advance(1_001);
    const [fresh] = await store.claimSubscriptions({ owner: 'w2', limit: 1, leaseMs: 30_000 });
    assert.ok(fresh !== undefined);
    assert.deepEqual(await store.renewSubscriptions([old!, fresh], 30_000), [fresh.id]);
    const progress = { id: 'sub_a', attempts: 0, nextAttemptAt: 0, lastError: null, at: 9 };
    assert.equal(await store.recordSubscriptionProgress({ ...progress, claimId: old!.claimId, cursor: 50 }), false);
    assert.equal(
      await store.recordSubscriptionProgress({
        ...progress,
        claimId: fresh.claimId,
        cursor: 40,
        delivered: 3,
        lastDeliveryAt: 8,
      }),
      true,
    );
    assert.equal(
      await store.recordSubscriptionProgress({
        ...progress,
        claimId: fresh.claimId,
        attempts: 2,
        nextAttemptAt: 20,
        lastError: 'http_5xx',
      }),
      true,
    );
    const s = (await store.getSubscription('sub_a'))!;
    assert.deepEqual(
      [s.cursor, s.delivered, s.lastDeliveryAt, s.attempts, s.nextAttemptAt, s.lastError],
      [40, 3, 8, 2, 20, 'http_5xx'],
    );
  });

  it('deletes an ending subscription under its claim once its notice is settled', async () => {
    await active('sub_a');
    const [claim] = await store.claimSubscriptions({ owner: 'w1', limit: 1, leaseMs: 30_000 });
    assert.equal(await store.finishSubscription(claim!), false, 'an active one is not finished');
    await store.terminateSubscription('sub_a', 'removed', 5);
    assert.equal(await store.finishSubscription({ id: 'sub_a', claimId: 'other' }), false);
    assert.equal(await store.finishSubscription(claim!), true);
    assert.equal(await store.getSubscription('sub_a'), null);
  });

  it('deletes a subscription at once, held or not', async () => {
    await active('sub_a');
    await store.claimSubscriptions({ owner: 'w1', limit: 1, leaseMs: 30_000 });
    assert.equal(await store.deleteSubscription('sub_a'), true);
    assert.equal(await store.deleteSubscription('sub_a'), false);
    assert.deepEqual(await store.listSubscriptions(), []);
  });
});
