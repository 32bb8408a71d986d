import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import {
  createStoreFixture,
  dropSchema,
  POSTGRES_URL,
  postgresUnavailable,
  uniqueSchema,
  type StoreFixture,
} from '../../../test/helpers/store-fixture.js';
import { completion, newRun } from '../../../test/helpers/store-records.js';
import type { Store } from '../store.js';
import { createPostgresStore } from './create-postgres-store.js';

const LEASE_MS = 60_000;

async function databaseNow(): Promise<number> {
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  try {
    const { rows } = await client.query('SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint AS now');
    return Number((rows[0] as { now: string }).now);
  } finally {
    await client.end();
  }
}

/** Runs `fn` while the process believes it is another time; the database keeps its own. */
async function withProcessTime<T>(at: number, fn: () => Promise<T>): Promise<T> {
  const real = Date.now;
  Date.now = () => at;
  try {
    return await fn();
  } finally {
    Date.now = real;
  }
}

/** Run claims between replicas, and leases judged by the database's clock. */
describe('PostgreSQL run queue', async () => {
  const why = await postgresUnavailable();
  if (why !== null) {
    process.stderr.write(`SKIPPED: PostgreSQL run queue: ${why}\n`);
    it('runs against PostgreSQL', { skip: why }, () => undefined);
    return;
  }
  const fixtures: StoreFixture[] = [];
  const stores: Store[] = [];
  const schemas: string[] = [];
  after(async () => {
    for (const f of fixtures) await f.dispose();
    for (const s of stores) await s.close();
    for (const s of schemas) await dropSchema(s);
  });
  const fixture = async (): Promise<StoreFixture> => {
    const f = await createStoreFixture('postgres');
    fixtures.push(f);
    return f;
  };
  /** A store without a test clock: leases on `hookgate_now_ms()`, as in production. */
  const onDatabaseClock = async (): Promise<Store> => {
    const schema = uniqueSchema();
    schemas.push(schema);
    const store = await createPostgresStore({ url: POSTGRES_URL, schema, poolSize: 2, mode: 'serve' });
    stores.push(store);
    return store;
  };

  it('sets leases on the database clock, whatever the process clock says', async () => {
    const store = await onDatabaseClock();
    await store.enqueueRun(newRun('s'));
    const before = await databaseNow();
    const [run] = await withProcessTime(0, () => store.claimRuns({ owner: 'a', limit: 1, leaseMs: LEASE_MS }));
    const afterwards = await databaseNow();
    assert.ok(run !== undefined);
    assert.ok(
      run.leaseUntil !== null && run.leaseUntil >= before + LEASE_MS && run.leaseUntil <= afterwards + LEASE_MS,
      `lease ${run.leaseUntil} within [${before}, ${afterwards}] + lease`,
    );
  });

  it('judges expiry by the database clock: a process running ahead does not take a live lease, one behind does not keep an expired one', async () => {
    const store = await onDatabaseClock();
    await store.enqueueRun(newRun('live'));
    await store.enqueueRun(newRun('gone'));
    const [live] = await store.claimRuns({ owner: 'a', limit: 1, leaseMs: LEASE_MS });
    const [gone] = await store.claimRuns({ owner: 'a', limit: 1, leaseMs: -1 });
    assert.ok(live !== undefined && gone !== undefined);
    const farAhead = (await databaseNow()) + 365 * 86_400_000;
    const swept = await withProcessTime(farAhead, () =>
      store.recoverExpiredRuns({ owner: 'b', maxAttempts: 3, leaseMs: LEASE_MS }),
    );
    assert.deepEqual(swept, { requeued: [gone.id], abandoned: [] });
    assert.deepEqual(await withProcessTime(0, () => store.renewRuns([live, gone], LEASE_MS)), [live.id]);
  });

  it('lets two replicas sweeping at once take each expired run once: requeued by one of them', async () => {
    const f = await fixture();
    const b = await f.open();
    for (let i = 0; i < 40; i++) await f.store.enqueueRun(newRun(`s${i}`));
    const claimed = await f.store.claimRuns({ owner: 'dead', limit: 40, leaseMs: LEASE_MS });
    assert.equal(claimed.length, 40);
    await f.clock.advance(LEASE_MS + 1);
    const [x, y] = await Promise.all([
      f.store.recoverExpiredRuns({ owner: 'a', maxAttempts: 3, leaseMs: LEASE_MS }),
      b.recoverExpiredRuns({ owner: 'b', maxAttempts: 3, leaseMs: LEASE_MS }),
    ]);
    const requeued = [...x.requeued, ...y.requeued];
    assert.equal(requeued.length, 40, 'each run requeued once');
    assert.deepEqual(new Set(requeued), new Set(claimed.map((r) => r.id)));
  });

  it('lets two replicas sweeping at once take each exhausted run once: abandoned to one of them', async () => {
    const f = await fixture();
    const b = await f.open();
    for (let i = 0; i < 40; i++) await f.store.enqueueRun(newRun(`s${i}`));
    const claimed = await f.store.claimRuns({ owner: 'dead', limit: 40, leaseMs: LEASE_MS });
    await f.clock.advance(LEASE_MS + 1);
    const [x, y] = await Promise.all([
      f.store.recoverExpiredRuns({ owner: 'a', maxAttempts: 1, leaseMs: LEASE_MS }),
      b.recoverExpiredRuns({ owner: 'b', maxAttempts: 1, leaseMs: LEASE_MS }),
    ]);
    const abandoned = [...x.abandoned, ...y.abandoned];
    assert.equal(abandoned.length, 40, 'each run abandoned to one sweeper');
    assert.deepEqual(new Set(abandoned.map((r) => r.id)), new Set(claimed.map((r) => r.id)));
    const stale = claimed[0]!;
    assert.equal(await b.completeRun(completion(stale)), false, 'the dead worker’s claim is fenced out');
    const mine = abandoned.find((r) => r.id === stale.id)!;
    assert.equal(
      await (x.abandoned.includes(mine) ? f.store : b).completeRun(
        completion(mine, { state: 'failed', error: 'lease expired', reply: null, delivery: null }),
      ),
      true,
    );
  });

  it('keeps the order of a session across replicas claiming at once', async () => {
    const f = await fixture();
    const b = await f.open();
    const order = Array.from({ length: 6 }, () => newRun('agent:main:hook:ordered'));
    for (const r of order) await f.store.enqueueRun(r);
    const finished: string[] = [];
    for (let round = 0; round < order.length; round++) {
      const [x, y] = await Promise.all([
        f.store.claimRuns({ owner: 'a', limit: 4, leaseMs: LEASE_MS }),
        b.claimRuns({ owner: 'b', limit: 4, leaseMs: LEASE_MS }),
      ]);
      const got = [...x.map((r) => ({ r, s: f.store })), ...y.map((r) => ({ r, s: b }))];
      assert.equal(got.length, 1, `round ${round}: exactly one run of the session is claimable`);
      const { r, s } = got[0]!;
      finished.push(r.id);
      assert.equal(await s.completeRun(completion(r)), true);
    }
    assert.deepEqual(
      finished,
      order.map((r) => r.id),
    );
  });
});
