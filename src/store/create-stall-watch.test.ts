import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createStallWatch, StoreStalledError } from './create-stall-watch.js';
import { isStoreUnavailable } from './is-store-unavailable.js';

describe('createStallWatch', () => {
  it('refuses once the oldest unfinished write is older than the bound, and lets writes in again when it ends', () => {
    let now = 0;
    const watch = createStallWatch(5000, () => now);
    watch.check();
    const first = watch.begin();
    now = 1000;
    const second = watch.begin();
    now = 5000;
    watch.check();
    now = 5001;
    assert.throws(() => watch.check(), (e) => e instanceof StoreStalledError && isStoreUnavailable(e) && /5001 ms ago/.test(e.message));
    watch.end(first);
    watch.check();
    now = 6002;
    assert.throws(() => watch.check(), StoreStalledError, 'the second is now the oldest');
    watch.end(second);
    watch.check();
  });
});
