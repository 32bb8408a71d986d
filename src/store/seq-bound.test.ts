import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createPassBounds, findSeqBound, OUT_OF_ORDER_AFTER_MS } from './seq-bound.js';

/** Looks over rows in memory; `read` counts the rows each look passes over or returns. */
function looksAt(rows: Array<{ seq: number; t: number }>, last = rows.at(-1)?.seq ?? 0) {
  const looks = {
    read: 0,
    atOrAfter(seq: number, below: number, notAfter: number) {
      for (const r of rows) {
        if (r.seq < seq) continue;
        if (r.seq >= below) return undefined;
        looks.read++;
        if (r.t <= notAfter) return r;
      }
      return undefined;
    },
    lastSeq: () => last,
  };
  return looks;
}

describe('findSeqBound', () => {
  // Rows at seq 1..10 (seq 4 and 5 pruned), created at 10 × seq.
  const rows = [1, 2, 3, 6, 7, 8, 9, 10].map((seq) => ({ seq, t: seq * 10 }));
  const look = looksAt(rows, 10);
  const now = 200;
  /** Dated further ahead of `now` than OUT_OF_ORDER_AFTER_MS. */
  const ahead = now + OUT_OF_ORDER_AFTER_MS + 1;

  it('finds the last row created before the cut-off, over a gap', async () => {
    assert.equal(await findSeqBound(look, 55, now), 3);
    assert.equal(await findSeqBound(look, 61, now), 6);
    assert.equal(await findSeqBound(look, 1_000, now), 10);
  });

  it('is 0 when no row is before the cut-off', async () => {
    assert.equal(await findSeqBound(look, 10, now), 0);
    assert.equal(await findSeqBound(looksAt([], 0), 100, now), 0);
  });

  it('passes over rows dated ahead of the clock, at the head or where the search looks', async () => {
    const times = (dated: Record<number, number>) =>
      Array.from({ length: 10 }, (_, i) => ({ seq: i + 1, t: dated[i + 1] ?? (i + 1) * 10 }));
    assert.equal(await findSeqBound(looksAt(times({ 1: ahead })), 75, now), 7, 'the oldest row is dated a year ahead');
    assert.equal(await findSeqBound(looksAt(times({ 6: ahead })), 75, now), 7, 'the first row the search looks at is');
    assert.equal(
      await findSeqBound(
        looksAt(times({ 1: ahead, 2: ahead, 3: ahead, 4: ahead, 5: ahead, 6: ahead, 7: ahead, 8: ahead })),
        95,
        now,
      ),
      9,
    );
    assert.equal(
      await findSeqBound(looksAt(times({ 8: ahead, 9: ahead, 10: ahead })), 1_000, now),
      7,
      'the newest rows are',
    );
    assert.equal(await findSeqBound(looksAt([{ seq: 1, t: ahead }]), 1_000, now), 0, 'no row in order');
  });

  it('takes a row dated within the hour after the clock as in order', async () => {
    const rows = [
      { seq: 1, t: now + OUT_OF_ORDER_AFTER_MS },
      { seq: 2, t: 20 },
    ];
    assert.equal(await findSeqBound(looksAt(rows), 75, now), 0);
  });

  it('reads each row dated ahead at most once, however the search falls', async () => {
    for (const [from, to] of [
      [1, 1000],
      [200, 700],
      [900, 1200],
      [1, 1500],
    ] as const) {
      const rows = Array.from({ length: 1500 }, (_, i) => ({
        seq: i + 1,
        t: i + 1 >= from && i + 1 <= to ? ahead : i + 1,
      }));
      for (const cutoff of [0, 150, 600, 1100, 1600]) {
        const look = looksAt(rows);
        const scan = rows.filter((r) => r.t < cutoff).at(-1)?.seq ?? 0;
        assert.equal(await findSeqBound(look, cutoff, now), scan, `rows ${from}–${to} ahead, cut-off ${cutoff}`);
        assert.ok(look.read <= to - from + 1 + 30, `rows ${from}–${to} ahead, cut-off ${cutoff}: ${look.read} read`);
      }
    }
  });
});

describe('createPassBounds', () => {
  it('searches once for the batches of a pass, and again when the cut-offs move, reading the clock once a pass', async () => {
    const searched: Array<[string, number]> = [];
    let clockReads = 0;
    const boundsOf = createPassBounds(
      (table) => async (cutoff, now) => {
        assert.equal(now, 1000 + clockReads - 1, 'the clock read for this pass');
        searched.push([table, cutoff]);
        return cutoff + 1;
      },
      () => 1000 + clockReads++,
    );
    const pass = { events: 10, runs: 20, deliveries: 30, transcript: 40, eventLog: 50 };
    assert.deepEqual(await boundsOf(pass), { events: 11, runs: 21, deliveries: 31, transcript: 41, eventLog: 51 });
    assert.deepEqual(await boundsOf({ ...pass }), {
      events: 11,
      runs: 21,
      deliveries: 31,
      transcript: 41,
      eventLog: 51,
    });
    assert.deepEqual(
      searched,
      [
        ['system_events', 10],
        ['runs', 20],
        ['deliveries', 30],
        ['transcript', 40],
        ['event_log', 50],
      ],
      'one search a table for the pass',
    );
    assert.deepEqual(await boundsOf({ ...pass, runs: 25 }), {
      events: 11,
      runs: 26,
      deliveries: 31,
      transcript: 41,
      eventLog: 51,
    });
    assert.equal(searched.length, 10, 'the next pass searches again');
    assert.equal(clockReads, 2, 'the clock is read once a pass, not once a table');
  });
});
