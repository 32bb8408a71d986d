import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createLog } from '../common/log.js';
import { createManualClock } from '../../test/helpers/manual-clock.js';
import { createAuthLimiter } from './create-auth-limiter.js';
import { createSharedAuthLimiter, MAX_FAILURE_WRITES } from './create-shared-auth-limiter.js';

const options = { maxFailures: 20, windowSeconds: 60, lockoutSeconds: 60, maxClients: 1000 };

describe('createSharedAuthLimiter', () => {
  it('counts at most MAX_FAILURE_WRITES failures in the store at once; past it a failure counts on this replica only', async () => {
    const pending: Array<(until: number | null) => void> = [];
    const counted: string[] = [];
    const store = {
      recordAuthFailure: (f: { client: string }) => {
        counted.push(f.client);
        return new Promise<number | null>((resolve) => pending.push(resolve));
      },
      listLockouts: async () => [],
      subscribe: () => () => undefined,
    };
    const local = createAuthLimiter(options);
    const limiter = createSharedAuthLimiter({
      local,
      store,
      options,
      clock: createManualClock(),
      log: createLog({ level: 'silent' }),
    });
    for (let i = 0; i < MAX_FAILURE_WRITES + 10; i++) limiter.recordFailure(`203.0.113.${i}`, 0);
    assert.equal(counted.length, MAX_FAILURE_WRITES, 'the store is asked no more than the bound at once');
    assert.equal(local.size(), MAX_FAILURE_WRITES + 10, 'every failure counted on this replica');
    for (const resolve of pending.splice(0)) resolve(null);
    await new Promise((resolve) => setImmediate(resolve));
    limiter.recordFailure('198.51.100.1', 0);
    assert.equal(counted.length, MAX_FAILURE_WRITES + 1, 'counted in the store again once the writes returned');
    for (const resolve of pending.splice(0)) resolve(null);
  });
});
