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
    assert.throws(
      () => watch.check(),
      (e) => e instanceof StoreStalledError && isStoreUnavailable(e) && /5001 ms ago/.test(e.message),
    );
    watch.end(first);
    watch.check();
    now = 6002;
    assert.throws(() => watch.check(), StoreStalledError, 'the second is now the oldest');
    watch.end(second);
    watch.check();
  });
});

describe('createStallWatch, writes ending out of order', () => {
  it('tracks the oldest write still open when a later one ends first, and ignores an end given twice', () => {
    let now = 0;
    const watch = createStallWatch(100, () => now);
    const a = watch.begin();
    now = 50;
    const b = watch.begin();
    now = 60;
    const c = watch.begin();
    watch.end(b);
    watch.end(b);
    now = 101;
    assert.throws(() => watch.check(), /101 ms ago/, 'a is still open');
    watch.end(a);
    now = 159;
    watch.check();
    now = 161;
    assert.throws(() => watch.check(), /101 ms ago/, 'c is the oldest now, b having ended');
    watch.end(c);
    watch.check();
    now = 1000;
    const d = watch.begin();
    now = 1101;
    assert.throws(() => watch.check(), /101 ms ago/, 'a write after the watch emptied counts from its own start');
    watch.end(d);
    watch.check();
  });
});
