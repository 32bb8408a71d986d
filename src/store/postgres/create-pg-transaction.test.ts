import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { POSTGRES_URL, postgresUnavailable } from '../../../test/helpers/store-fixture.js';
import { createPgTransaction, isConnectionLost, TX_ATTEMPTS } from './create-pg-transaction.js';

describe('createPgTransaction', async () => {
  const why = await postgresUnavailable();
  if (why !== null) {
    process.stderr.write(`SKIPPED: createPgTransaction: ${why}\n`);
    it('runs against PostgreSQL', { skip: why }, () => undefined);
    return;
  }
  const pool = new pg.Pool({ connectionString: POSTGRES_URL, max: 4 });
  pool.on('error', () => undefined);
  const tx = createPgTransaction(pool);
  const admin = new pg.Client({ connectionString: POSTGRES_URL });
  await admin.connect();
  after(async () => {
    await admin.end();
    await pool.end();
  });
  const pidOf = async (client: pg.PoolClient): Promise<number> =>
    ((await client.query('SELECT pg_backend_pid() AS pid')).rows[0] as { pid: number }).pid;

  it('tries again, on another connection, a transaction whose backend was ended before its commit', async () => {
    const pids: number[] = [];
    const result = await tx(async (client) => {
      pids.push(await pidOf(client));
      if (pids.length === 1) await client.query('SELECT pg_terminate_backend(pg_backend_pid())');
      return 'committed';
    });
    assert.equal(result, 'committed');
    assert.equal(pids.length, 2);
    assert.notEqual(pids[0], pids[1]);
  });

  it('lives through a backend ended between two statements, and drops that connection', async () => {
    const pids: number[] = [];
    const result = await tx(async (client) => {
      const pid = await pidOf(client);
      pids.push(pid);
      if (pids.length === 1) {
        // Ended from outside while the transaction holds the connection with no statement running:
        // the connection reports it as an `error` event, then refuses the next statement.
        await admin.query('SELECT pg_terminate_backend($1)', [pid]);
        await new Promise((r) => setTimeout(r, 200));
      }
      await client.query('SELECT 1');
      return 'committed';
    });
    assert.equal(result, 'committed');
    assert.equal(pids.length, 2);
    const { rows } = await admin.query('SELECT count(*)::int AS n FROM pg_stat_activity WHERE pid = $1', [pids[0]]);
    assert.equal((rows[0] as { n: number }).n, 0);
    // The pool goes on with sound connections only.
    assert.equal(await tx(async (client) => (await client.query('SELECT 2 AS two')).rows[0].two), 2);
  });

  it(`gives up after ${TX_ATTEMPTS} tries, with the last error`, async () => {
    let tries = 0;
    await assert.rejects(
      tx(async (client) => {
        tries++;
        await client.query('SELECT pg_terminate_backend(pg_backend_pid())');
      }),
      (e: unknown) => isConnectionLost(e),
    );
    assert.equal(tries, TX_ATTEMPTS);
  });

  it('does not try again a transaction that failed for a reason of its own, and rolls it back', async () => {
    let tries = 0;
    await assert.rejects(
      tx(async (client) => {
        tries++;
        await client.query('CREATE TEMP TABLE t_rolled_back (x int)');
        await client.query('SELECT 1/0');
      }),
      /division by zero/,
    );
    assert.equal(tries, 1);
    await tx(async (client) => {
      const { rows } = await client.query("SELECT to_regclass('pg_temp.t_rolled_back') AS t");
      assert.equal((rows[0] as { t: string | null }).t, null);
    });
  });
});
