import { describe, it, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { createSqliteFixture, type SqliteFixture } from '../../../test/helpers/sqlite-fixture.js';
import { createIds } from '../../common/ids.js';
import type { RequestRecord } from '../request-record.js';
import { createRequestsReader } from './read-requests.js';
import { createReadThread, type ReadThread } from './create-read-thread.js';

describe('request listings on a read thread', () => {
  let f: SqliteFixture;
  const ids = createIds();
  const record = (o: Partial<RequestRecord> = {}): RequestRecord => ({
    id: ids.next(), at: 1_000, method: 'POST', path: '/hooks/wake', hook: 'wake', client: '127.0.0.1', status: 200,
    code: null, reason: null, durationMs: 1, eventIds: [], runIds: [], payload: null, ...o,
  });
  let thread: ReadThread;
  beforeEach(async () => {
    f = await createSqliteFixture();
    thread = createReadThread(f.path);
  });
  afterEach(async () => {
    await thread.close();
    await f.dispose();
  });

  it('answers as the serving thread does, with the records written before it', async () => {
    const made = [record(), record({ status: 401, hook: null }), record({ hook: 'github' }), record({ status: 401, hook: 'github' })];
    for (const r of made) await f.store.recordRequest(r);
    // A record's later version (a 499 after its answer) replaces the earlier one.
    await f.store.recordRequest({ ...made[2]!, status: 499 });
    for (const options of [{}, { status: 401 }, { hook: 'github' }, { status: 499, hook: 'github' }, { status: 200 }, { limit: 1, status: 401 }]) {
      const here = createRequestsReader(f.raw)(options);
      assert.deepEqual(await thread.read({ kind: 'requests', options }), here, JSON.stringify(options));
    }
    assert.deepEqual((await thread.read({ kind: 'requests', options: { status: 401 } })).map((r) => r.id), [made[3]!.id, made[1]!.id]);
    assert.deepEqual(await thread.read({ kind: 'requests', options: { status: 200 } }), [{ ...made[0]! }]);
  });
});
