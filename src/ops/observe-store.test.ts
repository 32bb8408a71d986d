import { describe, it, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { createStoreFixture, type StoreFixture } from '../../test/helpers/store-fixture.js';
import { completion, newRun } from '../../test/helpers/store-records.js';
import type { DeliveryOutcome } from './create-metrics.js';
import { observeAuthLimiter } from './observe-auth-limiter.js';
import { observeStore } from './observe-store.js';
import { createAuthLimiter } from '../auth/index.js';

describe('observeStore', () => {
  let f: StoreFixture;
  let now = 1000;
  const runs: Array<[string, number | null]> = [];
  const deliveries: Array<[string, DeliveryOutcome]> = [];
  const metrics = {
    runFinished: (state: string, seconds: number | null) => runs.push([state, seconds]),
    deliveryAttempt: (channel: string, outcome: DeliveryOutcome) => deliveries.push([channel, outcome]),
  };
  beforeEach(async () => {
    f = await createStoreFixture('sqlite');
    runs.length = 0;
    deliveries.length = 0;
  });
  afterEach(() => f.dispose());

  it('reports a finished run with its time since the claim, once', async () => {
    const store = observeStore(f.store, metrics, () => now);
    await store.enqueueRun(newRun('hook:t'));
    const [run] = await store.claimRuns({ owner: 'o', limit: 1, leaseMs: 30_000 });
    now += 2500;
    assert.equal(await store.completeRun(completion(run!)), true);
    assert.equal(await store.completeRun(completion(run!)), false, 'a second completion is stale');
    assert.deepEqual(runs, [['succeeded', 2.5]]);
  });

  it('reports each recorded delivery attempt by channel and outcome, not a stale one', async () => {
    const store = observeStore(f.store, metrics, () => now);
    await store.enqueueRun(newRun('hook:d'));
    const [run] = await store.claimRuns({ owner: 'o', limit: 1, leaseMs: 30_000 });
    await store.completeRun(completion(run!));
    const [d] = await store.claimDueDeliveries({ owner: 'o', limit: 1, leaseMs: 30_000, now });
    const attempt = {
      deliveryId: d!.id,
      claimId: d!.claimId,
      attempt: 1,
      at: now,
      status: 200,
      error: null,
      outcome: 'sent' as const,
      resolvedChannel: 'telegram',
      resolvedTo: '42',
      partsSent: 1,
      nextAttemptAt: null,
      lastRoute: null,
    };
    assert.equal(await store.recordDeliveryAttempt(attempt), true);
    assert.equal(await store.recordDeliveryAttempt({ ...attempt, claimId: 'stale' }), false);
    assert.deepEqual(deliveries, [['telegram', 'sent']]);
  });
});

describe('observeAuthLimiter', () => {
  it('counts every failure and the lockout a failure starts', () => {
    let failures = 0;
    let lockouts = 0;
    const limiter = observeAuthLimiter(
      createAuthLimiter({ windowSeconds: 60, maxFailures: 2, lockoutSeconds: 60, maxClients: 10 }),
      {
        authFailure: () => {
          failures++;
        },
        lockout: () => {
          lockouts++;
        },
      },
    );
    assert.equal(limiter.recordFailure('10.0.0.1', 0).locked, false);
    assert.equal(limiter.recordFailure('10.0.0.1', 1).locked, true);
    assert.equal(limiter.check('10.0.0.1', 2).locked, true);
    assert.deepEqual([failures, lockouts], [2, 1]);
  });
});
