import { describe, it, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { createSqliteFixture, type SqliteFixture } from '../../../test/helpers/sqlite-fixture.js';
import { createIds } from '../../common/ids.js';
import type { RequestRecord } from '../request-record.js';
import { newRequestRecord } from '../../../test/helpers/store-records.js';
import { createRequestsReader } from './read-requests.js';
import { createReadThread, type ReadThread } from './create-read-thread.js';

describe('request listings on a read thread', () => {
  let f: SqliteFixture;
  const ids = createIds();
  const record = (o: Partial<RequestRecord> = {}): RequestRecord => newRequestRecord({ id: ids.next(), ...o });
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
    const made = [
      record(),
      record({ status: 401, hook: null }),
      record({ hook: 'github' }),
      record({ status: 401, hook: 'github' }),
    ];
    for (const r of made) await f.store.recordRequest(r);
    // A record's later version (a 499 after its answer) replaces the earlier one.
    await f.store.recordRequest({ ...made[2]!, status: 499 });
    for (const options of [
      {},
      { status: 401 },
      { hook: 'github' },
      { status: 499, hook: 'github' },
      { status: 200 },
      { limit: 1, status: 401 },
    ]) {
      const here = createRequestsReader(f.raw)(options);
      assert.deepEqual(await thread.read({ kind: 'requests', options }), here, JSON.stringify(options));
    }
    assert.deepEqual(
      (await thread.read({ kind: 'requests', options: { status: 401 } })).map((r) => r.id),
      [made[3]!.id, made[1]!.id],
    );
    assert.deepEqual(await thread.read({ kind: 'requests', options: { status: 200 } }), [{ ...made[0]! }]);
  });

  it('reads packed batches as the serving thread does', async () => {
    const made = Array.from({ length: 40 }, (_, i) =>
      record({ status: i % 4 === 0 ? 401 : 200, hook: i % 5 === 0 ? 'github' : 'wake' }),
    );
    await Promise.all(made.map((r) => f.store.recordRequest(r)));
    await f.store.recordRequest({ ...made[10]!, status: 499 });
    assert.ok(
      Buffer.isBuffer(f.raw.prepare('SELECT records FROM request_batches ORDER BY seq LIMIT 1').pluck().get()),
      'the first batch is packed',
    );
    for (const options of [
      { limit: 100 },
      { status: 401 },
      { hook: 'github' },
      { status: 499 },
      { status: 200, hook: 'github' },
    ]) {
      const here = createRequestsReader(f.raw)(options);
      assert.ok(here.length > 0, JSON.stringify(options));
      assert.deepEqual(await thread.read({ kind: 'requests', options }), here, JSON.stringify(options));
    }
    assert.deepEqual(
      (await thread.read({ kind: 'requests', options: { hook: 'github' } })).map((r) => r.id),
      [35, 30, 25, 20, 15, 10, 5, 0].map((i) => made[i]!).map((r) => r.id),
      'made[10] is a 499 now, still a github request',
    );
  });
});
