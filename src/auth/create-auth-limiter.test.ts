import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createAuthLimiter } from './create-auth-limiter.js';

const options = { maxFailures: 3, windowSeconds: 60, lockoutSeconds: 30, maxClients: 100 };

describe('createAuthLimiter', () => {
  it('locks a client out on the Nth failure within the window', () => {
    const limiter = createAuthLimiter(options);
    assert.deepEqual(limiter.recordFailure('a', 0), { locked: false });
    assert.deepEqual(limiter.recordFailure('a', 1000), { locked: false });
    assert.deepEqual(limiter.recordFailure('a', 2000), { locked: true, retryAfterSeconds: 30 });
    assert.deepEqual(limiter.check('a', 2000), { locked: true, retryAfterSeconds: 30 });
    assert.deepEqual(limiter.check('a', 31_500), { locked: true, retryAfterSeconds: 1 });
  });

  it('counts failures in a sliding window only', () => {
    const limiter = createAuthLimiter(options);
    limiter.recordFailure('a', 0);
    limiter.recordFailure('a', 30_000);
    // The first failure has left the 60 s window by now.
    assert.deepEqual(limiter.recordFailure('a', 60_001), { locked: false });
    assert.deepEqual(limiter.recordFailure('a', 60_002), { locked: true, retryAfterSeconds: 30 });
  });

  it('unlocks after the lockout with a clean window', () => {
    const limiter = createAuthLimiter(options);
    for (let i = 0; i < 3; i++) limiter.recordFailure('a', i);
    assert.deepEqual(limiter.check('a', 32_003), { locked: false });
    assert.deepEqual(limiter.recordFailure('a', 32_004), { locked: false });
  });

  it('keeps clients apart', () => {
    const limiter = createAuthLimiter(options);
    for (let i = 0; i < 3; i++) limiter.recordFailure('a', i);
    assert.equal(limiter.check('a', 10).locked, true);
    assert.deepEqual(limiter.check('b', 10), { locked: false });
  });

  it('bounds memory by forgetting the least recently seen client', () => {
    const limiter = createAuthLimiter({ ...options, maxClients: 2 });
    limiter.recordFailure('a', 0);
    limiter.recordFailure('b', 0);
    limiter.recordFailure('a', 1); // touch a: b is now the oldest
    limiter.recordFailure('c', 2);
    assert.equal(limiter.size(), 2);
    for (let i = 0; i < 2; i++) limiter.recordFailure('a', 3 + i);
    assert.equal(limiter.check('a', 10).locked, true, 'a was kept and reached the limit');
    for (let i = 0; i < 2; i++) limiter.recordFailure('b', 10 + i);
    assert.equal(limiter.check('b', 20).locked, false, 'b was forgotten, its count restarted');
  });

  it('keeps a locked client locked through 12,000 fresh addresses with one failure each', () => {
    const limiter = createAuthLimiter({ maxFailures: 20, windowSeconds: 60, lockoutSeconds: 60, maxClients: 10_000 });
    for (let i = 0; i < 20; i++) limiter.recordFailure('203.0.113.7', i);
    assert.equal(limiter.check('203.0.113.7', 100).locked, true);
    for (let i = 0; i < 12_000; i++) limiter.recordFailure(`198.18.${i >> 8}.${i & 255}`, 200 + i);
    assert.deepEqual(limiter.check('203.0.113.7', 20_000), { locked: true, retryAfterSeconds: 41 });
    assert.ok(limiter.size() <= 10_001, `size ${limiter.size()}`);
  });

  it('bounds the locked table too, letting out first the lock that ends soonest', () => {
    const limiter = createAuthLimiter({ ...options, maxClients: 2 });
    const lockAt = (client: string, t: number): void => {
      for (let i = 0; i < 3; i++) limiter.recordFailure(client, t + i);
    };
    lockAt('a', 0);
    lockAt('b', 100);
    lockAt('c', 200);
    assert.equal(limiter.size(), 2);
    assert.equal(limiter.check('a', 300).locked, false, 'a ended soonest and made room');
    assert.equal(limiter.check('b', 300).locked, true);
    assert.equal(limiter.check('c', 300).locked, true);
  });

  it('drops expired locks before it drops live ones', () => {
    const limiter = createAuthLimiter({ ...options, maxClients: 2 });
    for (let i = 0; i < 3; i++) limiter.recordFailure('a', i);
    for (let i = 0; i < 3; i++) limiter.recordFailure('b', 40_000 + i);
    for (let i = 0; i < 3; i++) limiter.recordFailure('c', 40_010 + i);
    assert.equal(limiter.check('b', 40_020).locked, true, 'a had expired; b kept its lock');
    assert.equal(limiter.check('c', 40_020).locked, true);
  });

  it('answers a failure recorded while locked with the running lockout, without extending it', () => {
    const limiter = createAuthLimiter(options);
    for (let i = 0; i < 3; i++) limiter.recordFailure('a', 0);
    assert.deepEqual(limiter.recordFailure('a', 10_000), { locked: true, retryAfterSeconds: 20 });
    assert.deepEqual(limiter.check('a', 30_001), { locked: false });
  });
});
