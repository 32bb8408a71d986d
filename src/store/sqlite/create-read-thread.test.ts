import { describe, it, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createSqliteFixture, type SqliteFixture } from '../../../test/helpers/sqlite-fixture.js';
import { MAIN, newEvent } from '../../../test/helpers/store-records.js';
import { writePendingEvents } from '../../../test/helpers/write-pending-events.js';
import { createReadThread, type ReadThread } from './create-read-thread.js';
import { encodeSource } from '../action-source.js';
import { createDigestReader } from './read-digest.js';
import { createQueueReader } from './read-queue.js';
import { createSessionsReader } from './read-sessions.js';

describe('the SQLite read thread', () => {
  let f: SqliteFixture;
  let thread: ReadThread | undefined;
  beforeEach(async () => {
    f = await createSqliteFixture();
  });
  afterEach(async () => {
    await thread?.close();
    thread = undefined;
    await f.dispose();
  });

  it('answers successive reads on one thread, each seeing the writes committed before it', async () => {
    thread = createReadThread(f.path);
    assert.equal(thread.started, 0, 'no thread before the first read');
    assert.deepEqual(await thread.read({ kind: 'queue' }), createQueueReader(f.raw)());
    await f.store.addSystemEvent(newEvent('one', { mode: 'next-heartbeat', createdAt: 10 }));
    const [queue, session] = await Promise.all([
      thread.read({ kind: 'queue' }),
      thread.read({ kind: 'session', key: MAIN }),
    ]);
    assert.equal(queue.pending_events, 1);
    assert.deepEqual(queue, createQueueReader(f.raw)());
    assert.deepEqual(session, createSessionsReader(f.raw).get(MAIN));
    assert.equal(thread.started, 1, 'the reads shared one thread');
  });

  it('makes a digest whose grouping outgrows its page cache (and spills) as one made in memory', async () => {
    // About 4 MB of sort keys (hook, shape, seq) against the thread's 2 MB cache.
    const hooks = ['gmail', 'github', 'stripe'].map((hook) =>
      encodeSource({ hook, external: true, allowUnsafeExternalContent: false }),
    );
    const word = (n: number): string => String.fromCharCode(97 + (n % 26), 97 + (Math.floor(n / 26) % 26));
    writePendingEvents(
      f.path,
      Array.from({ length: 60_000 }, (_, i) => ({
        id: `ev-${i}`,
        text: `alert ${word(i % 400)} ${word(i % 7)} on host ${word(i % 11)} number ${i}`,
        source: hooks[i % 3]!,
        createdAt: i,
      })),
    );
    thread = createReadThread(f.path);
    const options = { groups: 20, hooks: 50, newest: 5, high: 20 };
    const onThread = await thread.read({ kind: 'digest', sessionKey: MAIN, options });
    assert.equal(onThread?.total, 60_000);
    assert.equal(onThread?.byHook.length, 3);
    assert.equal(onThread?.groups.length, 20);
    assert.deepEqual(onThread, createDigestReader(f.raw)(MAIN, options));
  });

  it('ends an idle thread and starts another for the next read', async () => {
    thread = createReadThread(f.path, 50);
    await thread.read({ kind: 'queue' });
    await thread.read({ kind: 'queue' });
    assert.equal(thread.started, 1);
    await sleep(300);
    assert.deepEqual(await thread.read({ kind: 'queue' }), createQueueReader(f.raw)());
    assert.equal(thread.started, 2, 'the idle thread ended; a new one answered');
  });

  it('fails a read that fails with its error, and keeps answering', async () => {
    thread = createReadThread(f.path);
    await assert.rejects(thread.read({ kind: 'sessions', limit: 'many' as never }), /datatype mismatch/);
    assert.deepEqual(await thread.read({ kind: 'sessions', limit: 5 }), createSessionsReader(f.raw).list(5));
    assert.equal(thread.started, 1, 'a failed read does not end the thread');
  });

  it('fails each read with the reason while its database cannot be opened, and answers once it can', async () => {
    const path = join(dirname(f.path), 'later.db');
    thread = createReadThread(path);
    await assert.rejects(thread.read({ kind: 'queue' }), /unable to open database file/);
    await assert.rejects(thread.read({ kind: 'queue' }), /unable to open database file/);
    await f.raw.backup(path);
    assert.deepEqual(await thread.read({ kind: 'queue' }), createQueueReader(f.raw)());
    assert.equal(thread.started, 1);
  });

  it('refuses reads once closed and ends its thread', async () => {
    thread = createReadThread(f.path);
    const held = assert.rejects(thread.read({ kind: 'queue' }), /store is closed/);
    await thread.close();
    await held;
    await assert.rejects(thread.read({ kind: 'queue' }), /store is closed/);
    assert.equal(thread.started, 1);
  });
});
