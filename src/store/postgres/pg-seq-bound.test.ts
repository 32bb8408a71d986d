import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { POSTGRES_URL, postgresUnavailable } from '../../../test/helpers/store-fixture.js';
import { OUT_OF_ORDER_AFTER_MS } from '../seq-bound.js';
import { pgSeqBound } from './pg-seq-bound.js';

/** The store's clock in these cases: every time below is before it. */
const NOW = 10_000;
/** Dated further ahead of the clock than OUT_OF_ORDER_AFTER_MS (a clock that ran a year ahead for a moment). */
const AHEAD = NOW + 365 * 86_400_000;

describe('pgSeqBound', async () => {
  const why = await postgresUnavailable();
  if (why !== null) {
    process.stderr.write(`SKIPPED: pgSeqBound: ${why}\n`);
    it('runs against PostgreSQL', { skip: why }, () => undefined);
    return;
  }
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  before(async () => {
    await client.connect();
  });
  after(async () => {
    await client.end();
  });
  /** A temporary table of rows created at the given times, seq 1, 2, …; `deleted` seqs removed after. */
  const table = async (times: readonly number[], deleted: readonly number[] = []): Promise<void> => {
    await client.query('DROP TABLE IF EXISTS pg_temp.t');
    await client.query('CREATE TEMP TABLE t (seq bigserial PRIMARY KEY, created_at bigint NOT NULL)');
    if (times.length > 0) await client.query('INSERT INTO t (created_at) SELECT unnest($1::bigint[])', [times]);
    if (deleted.length > 0) await client.query('DELETE FROM t WHERE seq = ANY($1::bigint[])', [deleted]);
  };

  it('finds the last row created before the cut-off, over gaps, a pruned head and rows dated ahead of the clock', async () => {
    const cases: Array<{ times: number[]; deleted?: number[]; cutoff: number; bound: number }> = [
      { times: [], cutoff: 100, bound: 0 },
      { times: [10, 20, 30], cutoff: 10, bound: 0 },
      { times: [10, 20, 30], cutoff: 31, bound: 3 },
      { times: [10, 20, 20, 20, 30], cutoff: 20, bound: 1 },
      { times: [10, 20, 30, 40, 50, 60], deleted: [1, 2, 3], cutoff: 55, bound: 5 },
      { times: [10, 20, 30, 40, 50, 60, 70], deleted: [3, 4, 5], cutoff: 65, bound: 6 },
      { times: [10, 20, 30, 40, 50, 60, 70], deleted: [3, 4, 5], cutoff: 25, bound: 2 },
      { times: [AHEAD, 20, 30, 40, 50], cutoff: 45, bound: 4 },
      { times: [10, 20, 30, AHEAD, 50, 60, 70], cutoff: 65, bound: 6 },
      { times: [10, AHEAD, AHEAD, 40, 50, 60, 70], deleted: [4], cutoff: 55, bound: 5 },
      { times: [AHEAD, AHEAD], cutoff: 100, bound: 0 },
      { times: [10, NOW + OUT_OF_ORDER_AFTER_MS, 30], cutoff: 35, bound: 1 },
    ];
    for (const c of cases) {
      await table(c.times, c.deleted);
      assert.equal(await pgSeqBound(client, 't', c.cutoff, NOW), c.bound, JSON.stringify(c));
    }
  });

  it('agrees with a scan on a long table, at every cut-off, rows dated ahead of the clock among them', async () => {
    await table(
      Array.from({ length: 1000 }, (_, i) => (i >= 599 && i < 649 ? AHEAD : i * 3)),
      Array.from({ length: 200 }, (_, i) => 300 + i),
    );
    for (let cutoff = -1; cutoff <= 3001; cutoff += 97) {
      const { rows } = await client.query('SELECT coalesce(max(seq), 0) AS seq FROM t WHERE created_at < $1', [cutoff]);
      assert.equal(
        await pgSeqBound(client, 't', cutoff, NOW),
        Number((rows[0] as { seq: string }).seq),
        `cut-off ${cutoff}`,
      );
    }
  });
});
