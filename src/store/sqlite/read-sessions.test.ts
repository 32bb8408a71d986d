import { describe, it, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { createSqliteFixture, type SqliteFixture } from '../../../test/helpers/sqlite-fixture.js';
import { newEvent, newRun } from '../../../test/helpers/store-records.js';
import { ON_THREAD_ABOVE } from './create-flood-reads.js';
import { createSessionsReader } from './read-sessions.js';

describe('SQLite session listings', () => {
  let f: SqliteFixture;
  beforeEach(async () => {
    f = await createSqliteFixture();
  });
  afterEach(() => f.dispose());

  it('answers the same past the flood threshold, where it reads on a thread of its own', async () => {
    const s = f.store;
    await s.setLastRoute('hook:new', 'main', 'telegram', '2', 30);
    await s.enqueueRun(newRun('hook:run'));
    const events = Array.from({ length: ON_THREAD_ABOVE + 1 }, (_, i) => newEvent(`e${i}`, { mode: 'next-heartbeat' }));
    await s.recordActions({ events, runs: [], idempotency: null });
    const here = createSessionsReader(f.raw);
    const listed = await s.listSessions({ limit: 10 });
    assert.deepEqual(
      listed.map((x) => [x.key, x.pendingEvents]),
      [
        ['hook:new', 0],
        ['agent:main:main', ON_THREAD_ABOVE + 1],
        ['hook:run', 0],
      ],
    );
    assert.equal(here.list(10).length, 3);
    assert.equal((await s.getSession('agent:main:main'))?.pendingEvents, here.get('agent:main:main').pending);
  });
});
