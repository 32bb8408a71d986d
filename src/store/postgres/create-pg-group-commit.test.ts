import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type pg from 'pg';
import { newEvent, newRun } from '../../../test/helpers/store-records.js';
import { createPgGroupCommit, MAX_BATCH_WRITES, MAX_QUEUED_RECORDS } from './create-pg-group-commit.js';

interface Call {
  values: unknown[];
  settle(error?: Error): void;
}

/** A pool whose statements finish when the test says so. */
function createHeldPool(): { pool: pg.Pool; calls: Call[] } {
  const calls: Call[] = [];
  const pool = {
    query(_text: string, values: unknown[]) {
      return new Promise((resolve, reject) => {
        calls.push({ values, settle: (error) => (error === undefined ? resolve({ rows: [] }) : reject(error)) });
      });
    },
  };
  return { pool: pool as unknown as pg.Pool, calls };
}

const nextTurn = (): Promise<void> => new Promise((r) => setImmediate(r));
const turns = async (n: number): Promise<void> => {
  for (let i = 0; i < n; i++) await nextTurn();
};

/** The ids a batch statement inserts, from its first array parameter. */
const idsOf = (call: Call): unknown => call.values[0];

describe('createPgGroupCommit', () => {
  it('keeps at most two batches in flight and gathers the writes of later turns into the next one', async () => {
    const { pool, calls } = createHeldPool();
    const group = createPgGroupCommit(pool, 'hg_x');
    const first = newEvent('first');
    const second = newEvent('second');
    const later = [newEvent('a'), newEvent('b'), newEvent('c')];
    const settled = new Set<string>();
    const track = (id: string, p: Promise<void>): Promise<void> => p.then(() => void settled.add(id));

    const p1 = track(first.id, group.submit({ kind: 'event', event: first }));
    await turns(2);
    const p2 = track(second.id, group.submit({ kind: 'event', event: second }));
    await turns(2);
    const rest = [];
    for (const e of later) {
      rest.push(track(e.id, group.submit({ kind: 'event', event: e })));
      await turns(2);
    }
    assert.equal(calls.length, 2, 'a third batch waits while two are in flight');
    assert.equal(settled.size, 0, 'nothing is acknowledged before its statement returns');

    calls[0]!.settle();
    await p1;
    await turns(3);
    assert.equal(calls.length, 3);
    assert.deepEqual(
      idsOf(calls[2]!),
      later.map((e) => e.id),
      'the writes of three turns went as one statement',
    );
    assert.deepEqual([...settled], [first.id]);

    calls[1]!.settle();
    calls[2]!.settle();
    await Promise.all([p2, ...rest]);
    assert.equal(settled.size, 5);
  });

  it('fails a whole batch at once when the database cannot be reached, without retrying each write', async () => {
    const { pool, calls } = createHeldPool();
    const group = createPgGroupCommit(pool, 'hg_x');
    const writes = [
      group.submit({ kind: 'event', event: newEvent('a') }),
      group.submit({ kind: 'run', run: newRun('s') }),
      group.submit({ kind: 'event', event: newEvent('b') }),
    ];
    await turns(2);
    assert.equal(calls.length, 1);
    calls[0]!.settle(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }));
    const results = await Promise.allSettled(writes);
    assert.deepEqual(
      results.map((r) => r.status),
      ['rejected', 'rejected', 'rejected'],
    );
    assert.equal(calls.length, 1, 'no write-by-write retry against a database that is not there');
  });

  it('retries a batch that failed on its data write by write, so only the bad write fails', async () => {
    const { pool, calls } = createHeldPool();
    const group = createPgGroupCommit(pool, 'hg_x');
    const bad = newEvent('bad');
    const writes = [group.submit({ kind: 'event', event: newEvent('a') }), group.submit({ kind: 'event', event: bad })];
    await turns(2);
    calls[0]!.settle(Object.assign(new Error('duplicate key value violates unique constraint'), { code: '23505' }));
    await turns(3);
    assert.equal(calls.length, 3, 'one statement per write after the batch failed');
    for (const call of calls.slice(1)) {
      if ((idsOf(call) as string[])[0] === bad.id)
        call.settle(Object.assign(new Error('duplicate'), { code: '23505' }));
      else call.settle();
    }
    const results = await Promise.allSettled(writes);
    assert.deepEqual(
      results.map((r) => r.status),
      ['fulfilled', 'rejected'],
    );
  });

  it('finds the bad write of a large batch by halves: about 20 statements for 1,000 writes, not 1,000', async () => {
    const { pool, calls } = createHeldPool();
    const group = createPgGroupCommit(pool, 'hg_x');
    const events = Array.from({ length: 1000 }, (_, i) => newEvent(`e${i}`));
    const bad = events[637]!;
    const writes = Promise.allSettled(events.map((event) => group.submit({ kind: 'event', event })));
    let done = false;
    void writes.then(() => (done = true));
    const answered = new Set<Call>();
    for (let i = 0; i < 200 && !done; i++) {
      await turns(1);
      for (const call of calls) {
        if (answered.has(call)) continue;
        answered.add(call);
        if ((idsOf(call) as string[]).includes(bad.id))
          call.settle(Object.assign(new Error('invalid byte sequence'), { code: '22021' }));
        else call.settle();
      }
    }
    const results = await writes;
    assert.deepEqual(
      results.flatMap((r, i) => (r.status === 'rejected' ? [i] : [])),
      [637],
    );
    assert.ok(calls.length <= 1 + 2 * Math.ceil(Math.log2(1000)), `${calls.length} statements`);
  });

  it('drains: resolves only once every submitted write has settled', async () => {
    const { pool, calls } = createHeldPool();
    const group = createPgGroupCommit(pool, 'hg_x');
    const write = group.submit({ kind: 'event', event: newEvent('a') });
    let drained = false;
    const drain = group.drain().then(() => {
      drained = true;
    });
    await turns(3);
    assert.equal(drained, false);
    calls[0]!.settle();
    await Promise.all([write, drain]);
    assert.equal(drained, true);
  });

  it('sends a backlog in statements of at most MAX_BATCH_WRITES, two at a time', async () => {
    const { pool, calls } = createHeldPool();
    const group = createPgGroupCommit(pool, 'hg_x');
    const first = group.submit({ kind: 'event', event: newEvent('first') });
    await turns(2);
    const blocker = group.submit({ kind: 'event', event: newEvent('second') });
    await turns(2);
    // Both slots are taken: a backlog of 2,500 writes gathers meanwhile.
    const backlog = Array.from({ length: 2500 }, (_, i) => newEvent(`e${i}`));
    const settledBacklog = Promise.all(backlog.map((e) => group.submit({ kind: 'event', event: e })));
    await turns(2);
    assert.equal(calls.length, 2);
    calls[0]!.settle();
    calls[1]!.settle();
    await Promise.all([first, blocker]);
    await turns(3);
    assert.equal(calls.length, 4, 'both free slots take a batch of the backlog at once');
    assert.deepEqual(
      [(idsOf(calls[2]!) as unknown[]).length, (idsOf(calls[3]!) as unknown[]).length],
      [MAX_BATCH_WRITES, MAX_BATCH_WRITES],
    );
    calls[2]!.settle();
    calls[3]!.settle();
    await turns(3);
    assert.equal(calls.length, 5);
    assert.deepEqual(
      idsOf(calls[4]!),
      backlog.slice(2 * MAX_BATCH_WRITES).map((e) => e.id),
    );
    calls[4]!.settle();
    await settledBacklog;
  });

  it('drops request records past MAX_QUEUED_RECORDS while the database is slow, never another write', async () => {
    const { pool, calls } = createHeldPool();
    const group = createPgGroupCommit(pool, 'hg_x');
    const held = [group.submit({ kind: 'event', event: newEvent('a') })];
    await turns(2);
    held.push(group.submit({ kind: 'event', event: newEvent('b') }));
    await turns(2);
    const record = (i: number) => ({
      id: `q${i}`,
      at: 1,
      method: 'POST',
      path: '/hooks/wake',
      hook: 'wake',
      client: '203.0.113.7',
      status: 401,
      code: 'unauthorized',
      reason: null,
      durationMs: 0.1,
      eventIds: [],
      runIds: [],
      payload: null,
      headers: null,
    });
    const records = Array.from({ length: MAX_QUEUED_RECORDS + 5 }, (_, i) =>
      group.submit({ kind: 'request', record: record(i) }),
    );
    const event = group.submit({ kind: 'event', event: newEvent('still taken') });
    const refused = await Promise.allSettled(records.slice(MAX_QUEUED_RECORDS));
    assert.deepEqual(
      refused.map((r) => r.status),
      Array(5).fill('rejected'),
    );
    assert.match(String((refused[0] as PromiseRejectedResult).reason), /request records already wait/);
    // The database catches up: every statement, those sent meanwhile too, returns.
    const all = Promise.all([...held, event, ...records.slice(0, MAX_QUEUED_RECORDS)]);
    let done = false;
    void all.then(() => (done = true));
    for (let i = 0; i < 100 && !done; i++) {
      for (const c of calls) c.settle();
      await turns(1);
    }
    await all;
    // Once the queue has moved on, records are taken again.
    const again = group.submit({ kind: 'request', record: record(99_999) });
    await turns(2);
    calls.at(-1)!.settle();
    await again;
  });
});
