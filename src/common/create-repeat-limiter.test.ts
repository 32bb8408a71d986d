import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createRepeatLimiter } from './create-repeat-limiter.js';

describe('createRepeatLimiter', () => {
  it('passes the first line of a kind and drops the rest within the interval', () => {
    const l = createRepeatLimiter({ intervalMs: 100 });
    assert.deepEqual(
      [l.take('a', 0), l.take('a', 10), l.take('a', 99)].map((d) => d.kind),
      ['pass', 'drop', 'drop'],
    );
  });

  it('counts the held-back lines and the one that closes the window', () => {
    const l = createRepeatLimiter({ intervalMs: 100 });
    l.take('a', 0);
    l.take('a', 1);
    l.take('a', 2);
    assert.deepEqual(l.take('a', 150), { kind: 'summary', count: 3 });
    assert.equal(l.take('a', 151).kind, 'drop', 'a new window started');
  });

  it('passes a line after a quiet interval', () => {
    const l = createRepeatLimiter({ intervalMs: 100 });
    l.take('a', 0);
    assert.equal(l.take('a', 500).kind, 'pass');
  });

  it('keeps kinds apart', () => {
    const l = createRepeatLimiter({ intervalMs: 100 });
    l.take('a', 0);
    assert.equal(l.take('b', 1).kind, 'pass');
  });

  it('drains only closed windows that held lines back, unless asked for all', () => {
    const l = createRepeatLimiter({ intervalMs: 100 });
    l.take('a', 0);
    l.take('a', 1);
    l.take('b', 50);
    l.take('b', 51);
    l.take('c', 0);
    assert.deepEqual(l.drain(120), [{ key: 'a', count: 1 }]);
    assert.deepEqual(l.drain(), [{ key: 'b', count: 1 }]);
    assert.deepEqual(l.drain(), []);
  });

  it('stays bounded: the oldest kind is summarised early past maxKinds', () => {
    const l = createRepeatLimiter({ intervalMs: 100, maxKinds: 2 });
    l.take('a', 0);
    l.take('a', 1);
    l.take('b', 2);
    l.take('c', 3);
    assert.deepEqual(l.drain(4), [{ key: 'a', count: 1 }]);
    assert.equal(l.take('a', 5).kind, 'pass', 'a was forgotten');
  });
});
