import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import {
  createStoreFixture,
  POSTGRES_URL,
  postgresUnavailable,
  type StoreFixture,
} from '../../../test/helpers/store-fixture.js';
import type { WorkSignal } from '../types.js';

const rule = { windowMs: 60_000, maxFailures: 10, lockoutMs: 300_000 };

async function countRows(schema: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  try {
    const { rows } = await client.query(`SELECT client FROM "${schema}".auth_failures ORDER BY client`);
    return (rows as Array<{ client: string }>).map((r) => r.client);
  } finally {
    await client.end();
  }
}

/** The lockout as replicas share it: counted in one place, whoever the failure reached. */
describe('PostgreSQL lockouts', async () => {
  const why = await postgresUnavailable();
  if (why !== null) {
    process.stderr.write(`SKIPPED: PostgreSQL lockouts: ${why}\n`);
    it('runs against PostgreSQL', { skip: why }, () => undefined);
    return;
  }
  const fixtures: StoreFixture[] = [];
  after(async () => {
    for (const f of fixtures) await f.dispose();
  });
  const fixture = async (): Promise<StoreFixture> => {
    const f = await createStoreFixture('postgres');
    fixtures.push(f);
    return f;
  };

  it('counts every failure of a burst spread over two replicas, locking at exactly maxFailures', async () => {
    const f = await fixture();
    const b = await f.open();
    const burst = await Promise.all(
      Array.from({ length: rule.maxFailures - 1 }, (_, i) =>
        (i % 2 === 0 ? f.store : b).recordAuthFailure({ client: '203.0.113.9', ...rule }),
      ),
    );
    assert.deepEqual(
      burst,
      Array.from({ length: rule.maxFailures - 1 }, () => null),
      'one short of the limit: not locked',
    );
    assert.deepEqual(await b.listLockouts(100), []);
    const until = await b.recordAuthFailure({ client: '203.0.113.9', ...rule });
    assert.equal(until, f.clock.now() + rule.lockoutMs);
    assert.deepEqual(await f.store.listLockouts(100), [{ client: '203.0.113.9', lockedUntil: until }]);
  });

  it('announces a lockout to the other replica, and only when it starts', async () => {
    const f = await fixture();
    const b = await f.open();
    const heard: WorkSignal[] = [];
    b.subscribe((s) => {
      if (s.kind === 'lockout') heard.push(s);
    });
    const r = { ...rule, maxFailures: 2 };
    assert.equal(await f.store.recordAuthFailure({ client: '2001:db8::7', ...r }), null);
    const until = await f.store.recordAuthFailure({ client: '2001:db8::7', ...r });
    await f.clock.advance(1);
    assert.equal(
      await f.store.recordAuthFailure({ client: '2001:db8::7', ...r }),
      until,
      'a failure while locked keeps the lockout',
    );
    for (let i = 0; i < 200 && heard.length === 0; i++) await new Promise((res) => setTimeout(res, 5));
    // A notification from the last failure, had there been one, comes in order after the first.
    await b.recordAuthFailure({ client: 'marker', ...r, maxFailures: 1 });
    for (let i = 0; i < 200 && heard.length < 2; i++) await new Promise((res) => setTimeout(res, 5));
    assert.deepEqual(heard, [
      { kind: 'lockout', client: '2001:db8::7', lockedUntil: until },
      { kind: 'lockout', client: 'marker', lockedUntil: f.clock.now() + r.lockoutMs },
    ]);
  });

  it('forgets clients whose failures all left the window, keeping locked ones and recent ones', async () => {
    const f = await fixture();
    const schema = f.config.driver === 'postgres' ? f.config.schema : '';
    await f.store.recordAuthFailure({ client: 'stale', ...rule });
    await f.store.recordAuthFailure({ client: 'locked', ...rule, maxFailures: 1, lockoutMs: 10 * rule.windowMs });
    await f.clock.advance(rule.windowMs);
    await f.store.recordAuthFailure({ client: 'recent', ...rule });
    assert.deepEqual(await countRows(schema), ['locked', 'recent'], 'the stale row went with the next failure');
    await f.clock.advance(rule.windowMs - 1);
    await f.store.recordAuthFailure({ client: 'other', ...rule });
    assert.deepEqual(
      await countRows(schema),
      ['locked', 'other', 'recent'],
      'a failure inside the window keeps its row',
    );
  });

  it('deletes at most 100 stale rows a failure, those stale longest first', async () => {
    const f = await fixture();
    const schema = f.config.driver === 'postgres' ? f.config.schema : '';
    for (let i = 0; i < 150; i++) {
      await f.store.recordAuthFailure({ client: `s${String(i).padStart(3, '0')}`, ...rule });
      await f.clock.advance(1);
    }
    await f.clock.advance(rule.windowMs);
    await f.store.recordAuthFailure({ client: 'new1', ...rule });
    const left = await countRows(schema);
    assert.equal(left.length, 51);
    assert.deepEqual(left.slice(0, 2), ['new1', 's100'], 'the 100 oldest went');
    await f.store.recordAuthFailure({ client: 'new2', ...rule });
    assert.deepEqual(await countRows(schema), ['new1', 'new2']);
  });

  it('survives replicas pruning and counting the same stale clients at once', async () => {
    const f = await fixture();
    const b = await f.open();
    const clients = Array.from({ length: 30 }, (_, i) => `198.51.100.${i}`);
    for (const c of clients) await f.store.recordAuthFailure({ client: c, ...rule });
    await f.clock.advance(rule.windowMs);
    const results = await Promise.all(
      clients.flatMap((c) =>
        [f.store, b, f.store].map((s) => s.recordAuthFailure({ client: c, ...rule, maxFailures: 3 })),
      ),
    );
    assert.equal(
      results.filter((r) => r !== null).length,
      clients.length,
      'each client locked by its third fresh failure, the stale one not counted',
    );
    assert.deepEqual((await b.listLockouts(100)).map((l) => l.client).sort(), [...clients].sort());
  });

  it('counts only failures inside the window, none made while locked out', async () => {
    const f = await fixture();
    const r = { ...rule, maxFailures: 3, lockoutMs: rule.windowMs / 2 };
    await f.store.recordAuthFailure({ client: 'c', ...r });
    await f.store.recordAuthFailure({ client: 'c', ...r });
    await f.clock.advance(r.windowMs);
    assert.equal(await f.store.recordAuthFailure({ client: 'c', ...r }), null, 'the two old failures no longer count');
    assert.equal(await f.store.recordAuthFailure({ client: 'c', ...r }), null);
    const until = await f.store.recordAuthFailure({ client: 'c', ...r });
    assert.equal(until, f.clock.now() + r.lockoutMs);
    await f.clock.advance(1000);
    assert.equal(await f.store.recordAuthFailure({ client: 'c', ...r }), until);
    assert.equal(await f.store.recordAuthFailure({ client: 'c', ...r }), until);
    await f.clock.advance(r.lockoutMs - 1000);
    assert.deepEqual(await f.store.listLockouts(100), [], 'the lockout ended on the store clock');
    assert.equal(
      await f.store.recordAuthFailure({ client: 'c', ...r }),
      null,
      'failures during the lockout were not counted',
    );
  });
});
