import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createGroupCounts } from './group-counts.js';

describe('createGroupCounts', () => {
  it('counts up and down by group, never below 0', () => {
    const counts = createGroupCounts();
    counts.add('a');
    counts.add('a');
    counts.add('b');
    assert.equal(counts.get('a'), 2);
    assert.equal(counts.get('b'), 1);
    assert.equal(counts.get('c'), 0);
    counts.remove('a');
    counts.remove('b');
    counts.remove('b');
    counts.remove('c');
    assert.equal(counts.get('a'), 1);
    assert.equal(counts.get('b'), 0);
    assert.equal(counts.get('c'), 0);
  });

  it('keeps a group at 0 until it holds the sweep bound, then drops every group at 0 and none still counted', () => {
    const counts = createGroupCounts(4);
    for (const g of ['a', 'b', 'c', 'd']) counts.add(g);
    counts.remove('a');
    counts.remove('c');
    assert.equal(counts.size, 4, 'groups at 0 stay until the bound is reached');
    counts.add('e');
    assert.equal(counts.size, 3, 'a and c swept when e came in');
    assert.deepEqual(
      ['a', 'b', 'c', 'd', 'e'].map((g) => counts.get(g)),
      [0, 1, 0, 1, 1],
    );
  });

  it('stays bounded under a stream of one-off groups, and never drops a group still counted', () => {
    const counts = createGroupCounts(8);
    for (let i = 0; i < 10_000; i++) {
      counts.add(`g${i}`);
      counts.remove(`g${i}`);
    }
    assert.ok(counts.size <= 8, `held ${counts.size} groups`);
    const busy = createGroupCounts(8);
    for (let i = 0; i < 100; i++) busy.add(`g${i}`);
    assert.equal(busy.size, 100, 'groups still counted are never dropped');
    for (let i = 0; i < 100; i++) assert.equal(busy.get(`g${i}`), 1);
  });
});
