import { describe, it, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { createIds } from '../../common/ids.js';
import type { Store } from '../store.js';
import type { NewRun, NewSystemEvent } from '../types.js';
import { createGroupCommit } from './create-group-commit.js';
import { createSqliteStore } from './create-sqlite-store.js';

const ids = createIds();
const source = { hook: 'wake', external: true, allowUnsafeExternalContent: false };
const event = (text: string): NewSystemEvent => ({
  id: ids.next(), agentId: 'main', sessionKey: 'agent:main:main', text, mode: 'now', source, createdAt: Date.now(),
});
const run = (message: string): NewRun => ({
  id: ids.next(), agentId: 'main', sessionKey: 'hook:1', message, name: 'agent', wakeMode: 'now', deliver: true,
  channel: 'telegram', to: '42', model: 'echo/echo', thinking: 'low', timeoutSeconds: 30, source, createdAt: Date.now(),
});

describe('createSqliteStore', () => {
  let dir: string;
  let store: Store;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'hookgate-store-'));
    store = createSqliteStore({ path: join(dir, 'state', 'h.db') });
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('records events and lists them newest first', async () => {
    await Promise.all(['a', 'b', 'c'].map((t) => store.addSystemEvent(event(t))));
    const list = await store.listSystemEvents({ limit: 2 });
    assert.deepEqual(list.map((e) => e.text), ['c', 'b']);
    assert.equal(list[0]!.consumedAt, null);
    assert.deepEqual(list[0]!.source, source);
  });

  it('records runs as queued with every field', async () => {
    const r = run('hello');
    await store.enqueueRun(r);
    const [got] = await store.listRuns();
    assert.deepEqual(got, {
      ...r, state: 'queued', attempts: 0, startedAt: null, finishedAt: null, reply: null, error: null,
      modelUsed: null, leaseOwner: null, leaseUntil: null,
    });
  });

  it('has committed a write by the time its promise resolves', async () => {
    const e = event('durable');
    await store.addSystemEvent(e);
    const other = new Database(join(dir, 'state', 'h.db'), { readonly: true });
    try {
      assert.deepEqual(other.prepare('SELECT text FROM system_events WHERE id = ?').get(e.id), { text: 'durable' });
    } finally {
      other.close();
    }
  });

  it('uses WAL with synchronous FULL by default', () => {
    const db = new Database(join(dir, 'state', 'h.db'), { readonly: true });
    try {
      assert.equal(db.pragma('journal_mode', { simple: true }), 'wal');
    } finally {
      db.close();
    }
  });

  it('keeps every record across a reopen', async () => {
    for (let i = 0; i < 50; i++) void store.addSystemEvent(event(`e${i}`));
    await store.enqueueRun(run('r'));
    await store.close();
    store = createSqliteStore({ path: join(dir, 'state', 'h.db') });
    assert.equal((await store.listSystemEvents({ limit: 100 })).length, 50);
    assert.equal((await store.listRuns()).length, 1);
  });

  it('fails a duplicate id alone, committing the rest of its batch', async () => {
    const dup = event('one');
    await store.addSystemEvent(dup);
    const results = await Promise.allSettled([store.addSystemEvent(event('two')), store.addSystemEvent(dup), store.addSystemEvent(event('three'))]);
    assert.deepEqual(results.map((r) => r.status), ['fulfilled', 'rejected', 'fulfilled']);
    assert.deepEqual((await store.listSystemEvents()).map((e) => e.text), ['three', 'two', 'one']);
  });
});

describe('createGroupCommit', () => {
  it('commits the writes of one turn together, in one scheduled flush', async () => {
    const db = new Database(':memory:');
    db.exec('CREATE TABLE t (v INTEGER)');
    const scheduled: Array<() => void> = [];
    const group = createGroupCommit(db, (fn) => scheduled.push(fn));
    const insert = db.prepare('INSERT INTO t VALUES (?)');
    const count = (): unknown => db.prepare('SELECT count(*) AS n FROM t').get();
    const done = [1, 2, 3].map((v) => group.submit(() => insert.run(v)));
    assert.equal(scheduled.length, 1, 'one flush scheduled for the whole batch');
    assert.deepEqual(count(), { n: 0 }, 'nothing is written before the flush');
    scheduled[0]!();
    await Promise.all(done);
    assert.deepEqual(count(), { n: 3 });
    void group.submit(() => insert.run(4));
    assert.equal(scheduled.length, 2, 'the next turn schedules its own flush');
    db.close();
  });
});
