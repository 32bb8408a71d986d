import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { createStore, type Store } from '../index.js';
import { StoreSchema } from '../../config/index.js';
import { dropSchema, POSTGRES_URL, postgresUnavailable, uniqueSchema } from '../../../test/helpers/store-fixture.js';
import { newEvent, newLogEvent } from '../../../test/helpers/store-records.js';
import { createPgEventLog } from './create-pg-event-log.js';

describe('PostgreSQL event log head', async () => {
  const why = await postgresUnavailable();
  if (why !== null) {
    process.stderr.write(`SKIPPED: PostgreSQL event log head: ${why}\n`);
    it('PostgreSQL', { skip: why }, () => undefined);
    return;
  }
  const schema = uniqueSchema();
  let store: Store;
  let writer: pg.Client;
  let pool: pg.Pool;
  before(async () => {
    store = await createStore(StoreSchema.parse({ driver: 'postgres', url: POSTGRES_URL, schema, poolSize: 4 }), {
      mode: 'serve',
    });
    writer = new pg.Client({ connectionString: POSTGRES_URL, options: `-c search_path=${schema}` });
    await writer.connect();
    pool = new pg.Pool({ connectionString: POSTGRES_URL, options: `-c search_path=${schema}`, max: 2 });
  });
  after(async () => {
    await writer.end();
    await pool.end();
    await store.close();
    await dropSchema(schema);
  });

  it('stays below an occurrence still being written while a later one is committed, and moves once it commits', async () => {
    await store.addSystemEvent(newEvent('a', { published: newLogEvent('hook.wake') }));
    const before = (await store.readLogPosition()).head;
    // A transaction draws the next seq and holds it uncommitted; another commits the one after it.
    await writer.query('BEGIN');
    const held = await writer.query(
      `INSERT INTO event_log (id, name, created_at, data, untrusted) VALUES ('held', 'hook.wake', 1, '{}', true) RETURNING seq`,
    );
    await store.addSystemEvent(newEvent('b', { published: newLogEvent('hook.wake') }));
    const log = createPgEventLog({ pool }, { headWaitMs: 100 });
    const during = await log.readLogPosition();
    assert.equal(during.head, 0, 'no head is known safe while a writer that began first is still in flight');
    const seen = await store.readLogEvents({ name: 'hook.wake', after: before, through: 1e15, limit: 10 });
    assert.equal(seen.length, 1, 'the later occurrence is visible meanwhile');
    assert.ok(seen[0]!.seq > Number((held.rows[0] as { seq: string }).seq));
    await writer.query('COMMIT');
    const afterCommit = await log.readLogPosition();
    assert.equal(afterCommit.head, seen[0]!.seq);
    const all = await store.readLogEvents({ name: 'hook.wake', after: before, through: afterCommit.head, limit: 10 });
    assert.deepEqual(
      all.map((e) => e.id),
      ['held', seen[0]!.id],
      'read up to the head, nothing was passed over',
    );
  });

  it('keeps the head it knew while a writer is in flight, never a higher one', async () => {
    const log = createPgEventLog({ pool }, { headWaitMs: 50 });
    const known = (await log.readLogPosition()).head;
    assert.ok(known > 0);
    await writer.query('BEGIN');
    await writer.query(
      `INSERT INTO event_log (id, name, created_at, data, untrusted) VALUES ('held2', 'hook.wake', 1, '{}', true)`,
    );
    await store.addSystemEvent(newEvent('c', { published: newLogEvent('hook.wake') }));
    assert.equal((await log.readLogPosition()).head, known);
    await writer.query('ROLLBACK');
    assert.ok((await log.readLogPosition()).head > known, 'a writer that rolled back holds nothing back');
  });
});
