import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createAuthLimiter } from './create-auth-limiter.js';
import { groupAuthLimiter } from './group-auth-limiter.js';

const options = { maxFailures: 2, windowSeconds: 60, lockoutSeconds: 30, maxClients: 100 };
/** Groups by the text before the first dot, a stand-in for an address's block. */
const firstLabel = (client: string): string => client.split('.', 1)[0]!;

describe('groupAuthLimiter', () => {
  it('counts the failures of every client of a group together and locks the group', () => {
    const limiter = groupAuthLimiter(createAuthLimiter(options), firstLabel);
    assert.deepEqual(limiter.recordFailure('a.1', 0), { locked: false });
    assert.deepEqual(limiter.recordFailure('a.2', 0), { locked: true, retryAfterSeconds: 30 });
    assert.deepEqual(limiter.check('a.3', 1000), { locked: true, retryAfterSeconds: 29 });
    assert.deepEqual(limiter.check('b.1', 1000), { locked: false });
    assert.equal(limiter.size(), 1);
  });
});
