import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createPassBounds, findSeqBound } from './seq-bound.js';

describe('findSeqBound', () => {
  // Rows at seq 1..10 (seq 4 and 5 pruned), created at 10 × seq.
  const rows = [1, 2, 3, 6, 7, 8, 9, 10].map((seq) => ({ seq, t: seq * 10 }));
  const look = { atOrAfter: (seq: number) => rows.find((r) => r.seq >= seq), lastSeq: () => 10 };

  it('finds the last row created before the cut-off, over a gap', async () => {
    assert.equal(await findSeqBound(look, 55), 3);
    assert.equal(await findSeqBound(look, 61), 6);
    assert.equal(await findSeqBound(look, 1_000), 10);
  });

  it('is 0 when no row is before the cut-off', async () => {
    assert.equal(await findSeqBound(look, 10), 0);
    assert.equal(await findSeqBound({ atOrAfter: () => undefined, lastSeq: () => 0 }, 100), 0);
  });
});

describe('createPassBounds', () => {
  it('searches once for the batches of a pass, and again when the cut-offs move', async () => {
    const searched: Array<[string, number]> = [];
    const boundsOf = createPassBounds((table) => async (cutoff) => {
      searched.push([table, cutoff]);
      return cutoff + 1;
    });
    const pass = { events: 10, runs: 20, deliveries: 30, transcript: 40 };
    assert.deepEqual(await boundsOf(pass), { events: 11, runs: 21, deliveries: 31, transcript: 41 });
    assert.deepEqual(await boundsOf({ ...pass }), { events: 11, runs: 21, deliveries: 31, transcript: 41 });
    assert.deepEqual(searched, [['system_events', 10], ['runs', 20], ['deliveries', 30], ['transcript', 40]], 'one search a table for the pass');
    assert.deepEqual(await boundsOf({ ...pass, runs: 25 }), { events: 11, runs: 26, deliveries: 31, transcript: 41 });
    assert.equal(searched.length, 8, 'the next pass searches again');
  });
});
