import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { OUT_OF_ORDER_AFTER_MS } from '../seq-bound.js';
import { createSeqBound } from './create-seq-bound.js';

/** The store's clock in these cases: every time below is before it. */
const NOW = 10_000;
/** Dated further ahead of the clock than OUT_OF_ORDER_AFTER_MS (a clock that ran a year ahead for a moment). */
const AHEAD = NOW + 365 * 86_400_000;

/** A table of rows created at the given times, seq 1, 2, …; `deleted` seqs are removed after. */
function table(times: readonly number[], deleted: readonly number[] = []): Database.Database {
  const db = new Database(':memory:');
  db.exec('CREATE TABLE t (seq INTEGER PRIMARY KEY, created_at INTEGER NOT NULL)');
  const insert = db.prepare('INSERT INTO t (created_at) VALUES (?)');
  for (const at of times) insert.run(at);
  const remove = db.prepare('DELETE FROM t WHERE seq = ?');
  for (const seq of deleted) remove.run(seq);
  return db;
}

describe('createSeqBound', () => {
  const cases: Array<{ name: string; times: number[]; deleted?: number[]; cutoff: number; bound: number }> = [
    { name: 'an empty table', times: [], cutoff: 100, bound: 0 },
    { name: 'nothing created before the cut-off', times: [10, 20, 30], cutoff: 10, bound: 0 },
    { name: 'everything created before it', times: [10, 20, 30], cutoff: 31, bound: 3 },
    { name: 'the last row before it', times: [10, 20, 30, 40, 50], cutoff: 35, bound: 3 },
    { name: 'equal times count as not before', times: [10, 20, 20, 20, 30], cutoff: 20, bound: 1 },
    { name: 'a head pruned away', times: [10, 20, 30, 40, 50, 60], deleted: [1, 2, 3], cutoff: 55, bound: 5 },
    { name: 'gaps around the boundary', times: [10, 20, 30, 40, 50, 60, 70], deleted: [3, 4, 5], cutoff: 65, bound: 6 },
    {
      name: 'the boundary right before a gap',
      times: [10, 20, 30, 40, 50, 60, 70],
      deleted: [3, 4, 5],
      cutoff: 25,
      bound: 2,
    },
    { name: 'the oldest row dated ahead of the clock', times: [AHEAD, 20, 30, 40, 50], cutoff: 45, bound: 4 },
    { name: 'a row dated ahead where the search looks', times: [10, 20, 30, AHEAD, 50, 60, 70], cutoff: 65, bound: 6 },
    {
      name: 'rows dated ahead beside a gap',
      times: [10, AHEAD, AHEAD, 40, 50, 60, 70],
      deleted: [4],
      cutoff: 55,
      bound: 5,
    },
    { name: 'only rows dated ahead', times: [AHEAD, AHEAD], cutoff: 100, bound: 0 },
    {
      name: 'a row dated within the hour after the clock, in order',
      times: [10, NOW + OUT_OF_ORDER_AFTER_MS, 30],
      cutoff: 35,
      bound: 1,
    },
  ];
  for (const c of cases) {
    it(`finds the last row created before the cut-off: ${c.name}`, async () => {
      const db = table(c.times, c.deleted);
      try {
        assert.equal(await createSeqBound(db, 't')(c.cutoff, NOW), c.bound);
      } finally {
        db.close();
      }
    });
  }

  it('agrees with a scan on a long table, at every cut-off, rows dated ahead of the clock among them', async () => {
    // Rows 600–649 were written while the clock ran ahead; rows 300–499 are pruned.
    const times = Array.from({ length: 1000 }, (_, i) => (i >= 599 && i < 649 ? AHEAD : i * 3));
    const db = table(
      times,
      Array.from({ length: 200 }, (_, i) => 300 + i),
    );
    try {
      const bound = createSeqBound(db, 't');
      const scan = db.prepare('SELECT coalesce(max(seq), 0) AS seq FROM t WHERE created_at < ?');
      for (let cutoff = -1; cutoff <= 3001; cutoff += 7) {
        assert.equal(await bound(cutoff, NOW), (scan.get(cutoff) as { seq: number }).seq, `cut-off ${cutoff}`);
      }
    } finally {
      db.close();
    }
  });
});
