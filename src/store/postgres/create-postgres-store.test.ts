import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import type { createManualClock } from '../../../test/helpers/manual-clock.js';
import { createPgProxy } from '../../../test/helpers/pg-proxy.js';
import { dropSchema, POSTGRES_URL, postgresUnavailable, uniqueSchema } from '../../../test/helpers/store-fixture.js';
import { newEvent, newRun } from '../../../test/helpers/store-records.js';
import { StoreStalledError } from '../create-stall-watch.js';
import type { Store } from '../store.js';
import type { WorkSignal } from '../types.js';
import { isStoreUnavailable } from '../is-store-unavailable.js';
import { batchStatement } from './create-pg-group-commit.js';
import { StoreMissingError } from '../sqlite/lock-database.js';
import { createPostgresStore, describeUrl } from './create-postgres-store.js';
import { PG_MIGRATIONS } from './migrations.js';
import { StoreOpenError } from '../store-open-error.js';

/** Asserts that `write` fails as store-unavailable, and does not still hang 5 s later. */
async function assertUnavailableWithin5s(write: Promise<unknown>): Promise<void> {
  const error = await Promise.race([
    write.then(
      () => null,
      (e: unknown) => e,
    ),
    new Promise((resolve) => setTimeout(() => resolve('still waiting after 5 s'), 5000).unref()),
  ]);
  assert.ok(error !== null && isStoreUnavailable(error), `a store-unavailable error, got ${String(error)}`);
}

/** What only PostgreSQL has: several stores on one schema are replicas. */
describe('createPostgresStore', async () => {
  const why = await postgresUnavailable();
  if (why !== null) {
    process.stderr.write(`SKIPPED: createPostgresStore: ${why}\n`);
    it('runs against PostgreSQL', { skip: why }, () => undefined);
    return;
  }
  const schemas: string[] = [];
  const stores: Store[] = [];
  after(async () => {
    for (const s of stores) await s.close().catch(() => undefined);
    for (const s of schemas) await dropSchema(s);
  });
  const open = async (
    schema: string,
    mode: 'serve' | 'read' | 'write' = 'serve',
    clock?: ReturnType<typeof createManualClock>,
  ) => {
    const s = await createPostgresStore({ url: POSTGRES_URL, schema, poolSize: 4, mode, ...(clock ? { clock } : {}) });
    stores.push(s);
    return s;
  };
  const fresh = (): string => {
    const s = uniqueSchema();
    schemas.push(s);
    return s;
  };

  it('migrates a fresh schema once when three replicas start together', async () => {
    const schema = fresh();
    const [a, b, c] = await Promise.all([open(schema), open(schema), open(schema)]);
    await a!.addSystemEvent(newEvent('one'));
    assert.equal((await c!.listSystemEvents()).length, 1);
    assert.equal((await b!.listSystemEvents()).length, 1);
    const client = new pg.Client({ connectionString: POSTGRES_URL });
    await client.connect();
    const { rows } = await client.query(`SELECT version FROM "${schema}".hookgate_schema`);
    await client.end();
    assert.deepEqual(rows, [{ version: PG_MIGRATIONS.length }]);
  });

  it('reads a schema no gateway has created as missing, like a SQLite file that does not exist', async () => {
    await assert.rejects(
      open(fresh(), 'read'),
      (e: Error) => e instanceof StoreMissingError && /start the gateway once/.test(e.message),
    );
  });

  it('refuses a schema another version of hookgate migrated, naming both versions', async () => {
    const schema = fresh();
    await (await open(schema)).close();
    const client = new pg.Client({ connectionString: POSTGRES_URL });
    await client.connect();
    await client.query(`UPDATE "${schema}".hookgate_schema SET version = version + 1`);
    await client.end();
    await assert.rejects(
      open(schema, 'write'),
      (e: Error) =>
        e instanceof StoreOpenError &&
        e.code === 'store_outdated' &&
        e.message.includes(`schema version ${PG_MIGRATIONS.length + 1}, this hookgate expects ${PG_MIGRATIONS.length}`),
    );
  });

  it('names the database without its password when it cannot connect', async () => {
    assert.equal(describeUrl('postgres://u:secret@db.example:6543/prod'), 'db.example:6543/prod');
    await assert.rejects(
      createPostgresStore({ url: 'postgres://u:secret@127.0.0.1:1/x', schema: 'public', poolSize: 2, mode: 'serve' }),
      (e: Error) =>
        e instanceof StoreOpenError &&
        e.code === 'store_open_failed' &&
        e.message.includes('127.0.0.1:1/x') &&
        !e.message.includes('secret'),
    );
  });

  it('commits the ingress writes of one turn in one statement, each resolving after it', async () => {
    const schema = fresh();
    const store = await open(schema);
    const statements: string[] = [];
    const original = pg.Pool.prototype.query;
    pg.Pool.prototype.query = function (this: pg.Pool, ...args: unknown[]) {
      if (typeof args[0] === 'string' && args[0].startsWith('WITH ')) statements.push(args[0]);
      return (original as (...a: unknown[]) => unknown).apply(this, args);
    } as typeof original;
    try {
      await Promise.all([
        ...Array.from({ length: 20 }, (_, i) => store.addSystemEvent(newEvent(`e${i}`))),
        ...Array.from({ length: 5 }, (_, i) => store.enqueueRun(newRun(`s${i}`))),
      ]);
    } finally {
      pg.Pool.prototype.query = original;
    }
    assert.equal(statements.length, 1, 'one statement for the whole turn');
    assert.equal((await store.listSystemEvents({ limit: 100 })).length, 20);
    assert.equal((await store.listRuns({ limit: 100 })).length, 5);
  });

  /** Runs `body` on a fresh store while another session holds `system_events` locked, until `unlock`. */
  const whileEventsLocked = async (
    options: { lockTimeoutMs: number; stallMs?: number },
    body: (store: Store, unlock: () => Promise<unknown>) => Promise<void>,
  ): Promise<void> => {
    const schema = fresh();
    const store = await createPostgresStore({ url: POSTGRES_URL, schema, poolSize: 4, mode: 'serve', ...options });
    stores.push(store);
    const locker = new pg.Client({ connectionString: POSTGRES_URL });
    await locker.connect();
    try {
      await locker.query('BEGIN');
      await locker.query(`LOCK TABLE "${schema}".system_events IN ACCESS EXCLUSIVE MODE`);
      await body(store, () => locker.query('ROLLBACK'));
    } finally {
      await locker.end();
    }
  };

  it('fails an ingress write as unavailable, instead of waiting, while another session holds the table locked', async () => {
    await whileEventsLocked({ lockTimeoutMs: 300 }, async (store, unlock) => {
      await assertUnavailableWithin5s(store.addSystemEvent(newEvent('while locked')));
      await unlock();
      await store.addSystemEvent(newEvent('after'));
      assert.deepEqual(
        (await store.listSystemEvents({ limit: 10 })).map((e) => e.text),
        ['after'],
      );
    });
  });

  it('refuses new ingress writes at once while one has gone unfinished for stallMs, and takes them again after', async () => {
    await whileEventsLocked({ lockTimeoutMs: 10_000, stallMs: 100 }, async (store, unlock) => {
      const taken = store.addSystemEvent(newEvent('taken'));
      await new Promise((r) => setTimeout(r, 200));
      const started = Date.now();
      await assert.rejects(
        store.addSystemEvent(newEvent('refused')),
        (e) => e instanceof StoreStalledError && isStoreUnavailable(e),
      );
      await assert.rejects(
        store.recordActions({ events: [newEvent('refused too')], runs: [], idempotency: null }),
        StoreStalledError,
      );
      assert.ok(Date.now() - started < 100, 'refused at once, not after a wait');
      await unlock();
      await taken;
      await store.addSystemEvent(newEvent('after'));
      assert.deepEqual((await store.listSystemEvents({ limit: 10 })).map((e) => e.text).sort(), ['after', 'taken']);
    });
  });

  it('fails a write as unavailable when the server stops answering, then writes on a new connection', async () => {
    const proxy = await createPgProxy(POSTGRES_URL);
    const schema = fresh();
    const store = await createPostgresStore({
      url: proxy.url,
      schema,
      poolSize: 4,
      mode: 'serve',
      queryTimeoutMs: 500,
    });
    stores.push(store);
    try {
      await store.addSystemEvent(newEvent('before'));
      proxy.frozen = true;
      await assertUnavailableWithin5s(store.addSystemEvent(newEvent('while frozen')));
      proxy.frozen = false;
      await store.addSystemEvent(newEvent('after'));
      const texts = (await store.listSystemEvents({ limit: 10 })).map((e) => e.text);
      assert.ok(texts.includes('before') && texts.includes('after'), JSON.stringify(texts));
    } finally {
      // Cut whatever still hangs on the proxy, so closing the store cannot wait on it.
      await proxy.close();
      await store.close();
    }
  });

  it('fails a bad write of a batch alone', async () => {
    const store = await open(fresh());
    const dup = newEvent('dup');
    await store.addSystemEvent(dup);
    const results = await Promise.allSettled([
      store.addSystemEvent(newEvent('a')),
      store.addSystemEvent(dup),
      store.enqueueRun(newRun('s')),
    ]);
    assert.deepEqual(
      results.map((r) => r.status),
      ['fulfilled', 'rejected', 'fulfilled'],
    );
  });

  it('builds a batch statement that only announces work there is', () => {
    const { text } = batchStatement([{ kind: 'event', event: newEvent('x', { mode: 'next-heartbeat' }) }], 'hg_x');
    assert.doesNotMatch(text, /pg_notify/);
    const withRun = batchStatement([{ kind: 'run', run: newRun('s') }], 'hg_x');
    assert.match(withRun.text, /pg_notify/);
  });

  it('announces work to every replica, and never lets two replicas claim one run', async () => {
    const schema = fresh();
    const a = await open(schema);
    const b = await open(schema);
    const seen: WorkSignal[] = [];
    b.subscribe((s) => seen.push(s));
    await a.enqueueRun(newRun('k'));
    for (let i = 0; i < 100 && !seen.some((s) => s.kind === 'runs'); i++) await new Promise((r) => setTimeout(r, 10));
    assert.ok(
      seen.some((s) => s.kind === 'runs'),
      'the other replica heard of the run',
    );
    for (let i = 0; i < 200; i++) await a.enqueueRun(newRun(`k${i % 50}`));
    const claimed: string[] = [];
    for (let round = 0; round < 30; round++) {
      const [x, y] = await Promise.all([
        a.claimRuns({ owner: 'a', limit: 8, leaseMs: 60_000 }),
        b.claimRuns({ owner: 'b', limit: 8, leaseMs: 60_000 }),
      ]);
      const sessions = [...x, ...y].map((r) => r.sessionKey);
      assert.equal(new Set(sessions).size, sessions.length, 'one running run per session across replicas');
      claimed.push(...[...x, ...y].map((r) => r.id));
      await Promise.all([...x.map((r) => a.completeRun(done(r))), ...y.map((r) => b.completeRun(done(r)))]);
    }
    assert.equal(new Set(claimed).size, claimed.length, 'no run claimed twice');
  });

  it('hears notifications again after its listening connection was cut', async (t) => {
    const schema = fresh();
    // Through a proxy, so that only this store's connections are ended, never another's on the server.
    const proxy = await createPgProxy(POSTGRES_URL);
    t.after(() => proxy.close());
    const store = await createPostgresStore({ url: proxy.url, schema, poolSize: 4, mode: 'serve' });
    stores.push(store);
    const other = await open(schema);
    const seen: WorkSignal[] = [];
    store.subscribe((s) => seen.push(s));
    assert.ok((await proxy.backendQueries()).some((q) => q.startsWith('LISTEN')));
    assert.ok((await proxy.terminateBackends()) >= 1);
    for (let i = 0; i < 300 && seen.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
    assert.ok(
      seen.some((s) => s.kind === 'runs'),
      'after reconnecting it announces runs and deliveries it may have missed',
    );
    seen.length = 0;
    await other.addSystemEvent(newEvent('now again'));
    for (let i = 0; i < 300 && !seen.some((s) => s.kind === 'heartbeat'); i++)
      await new Promise((r) => setTimeout(r, 10));
    assert.ok(
      seen.some((s) => s.kind === 'heartbeat'),
      'and hears new work',
    );
  });
});

const done = (r: { id: string; claimId: string; sessionKey: string; wakeMode: 'now' | 'next-heartbeat' }) => ({
  runId: r.id,
  claimId: r.claimId,
  state: 'succeeded' as const,
  finishedAt: 1,
  model: null,
  reply: 'ok',
  error: null,
  transcript: [],
  summary: newEvent('Hook agent: ok', { mode: 'next-heartbeat' }),
  delivery: null,
});
