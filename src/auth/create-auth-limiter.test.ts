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
});
