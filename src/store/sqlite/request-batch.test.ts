import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { RequestRecord } from '../request-record.js';
import { PACK_FROM_CHARS, packRecords, readRequestBatch, RequestBatchBuilder, unpackRecords } from './request-batch.js';

const record = (o: Partial<RequestRecord> = {}): RequestRecord => ({
  id: '01900000-0000-7000-8000-000000000001',
  at: 1_000,
  method: 'POST',
  path: '/hooks/wake',
  hook: 'wake',
  client: '203.0.113.7',
  status: 200,
  code: null,
  reason: null,
  durationMs: 0.25,
  eventIds: ['01900000-0000-7000-8000-00000000000a'],
  runIds: [],
  payload: null,
  headers: null,
  ...o,
});

const idOf = (i: number): string => `01900000-0000-7000-8000-${String(i).padStart(12, '0')}`;

describe('RequestBatchBuilder', () => {
  it('builds a row whose records read back in the order added, with the id and time bounds', () => {
    const b = new RequestBatchBuilder();
    assert.equal(b.build(), null, 'nothing added');
    const later = record({ id: idOf(2), at: 2_000, status: 202, runIds: ['r1'], eventIds: [] });
    const first = record();
    b.add(later);
    b.add(first);
    const row = b.build()!;
    assert.deepEqual(
      [row.min_id, row.max_id, row.min_at, row.max_at, row.count],
      [first.id, later.id, 1_000, 2_000, 2],
    );
    assert.deepEqual(readRequestBatch(row.records), [later, first]);
  });

  it('holds a record added again once, as added last, in its first place', () => {
    const b = new RequestBatchBuilder();
    const first = record({ status: 202 });
    const other = record({ id: idOf(2) });
    const again = record({ status: 503, code: 'store_unavailable', reason: 'The store cannot write.' });
    b.add(first);
    b.add(other);
    b.add(again);
    assert.equal(b.count, 2);
    const row = b.build()!;
    assert.equal(row.count, 2);
    assert.deepEqual(readRequestBatch(row.records), [again, other]);
    assert.ok(
      Math.abs(b.chars - unpackRecords(row.records).length) <= 100,
      "the replaced version no longer counts toward the batch's size",
    );
  });

  it('finds each record added again, whether the records came in order or not', () => {
    const b = new RequestBatchBuilder();
    const v = (i: number, status: number): RequestRecord => record({ id: idOf(i), status });
    // In order; then the newest again; then one arriving late, below the newest; then an earlier
    // one again; then more in order, and one of those again.
    for (const r of [
      v(2, 200),
      v(4, 200),
      v(6, 200),
      v(6, 499),
      v(3, 200),
      v(2, 503),
      v(8, 200),
      v(9, 200),
      v(8, 499),
      v(3, 502),
    ])
      b.add(r);
    const row = b.build()!;
    assert.equal(row.count, 6);
    assert.deepEqual(
      readRequestBatch(row.records).map((r) => [r.id, r.status]),
      [
        [idOf(2), 503],
        [idOf(4), 200],
        [idOf(6), 499],
        [idOf(3), 502],
        [idOf(8), 499],
        [idOf(9), 200],
      ],
    );
    assert.deepEqual([row.min_id, row.max_id], [idOf(2), idOf(9)]);
  });

  it('writes each kind of record once a batch, and reads back times before the first and durations to the µs', () => {
    const b = new RequestBatchBuilder(Number.POSITIVE_INFINITY);
    const made = [
      record({ id: idOf(1), at: 5_000, durationMs: 12.345 }),
      record({ id: idOf(2), at: 5_003, durationMs: 0.001 }),
      record({
        id: idOf(3),
        at: 4_990,
        status: 401,
        hook: null,
        code: 'unauthorized',
        reason: 'Missing or invalid token.',
        eventIds: [],
      }),
      record({ id: idOf(4), at: 5_010, durationMs: 3000.5, payload: '{"text":"é \\"q\\""}' }),
      record({ id: idOf(5), at: 5_011, client: '198.51.100.2' }),
      record({
        id: idOf(6),
        at: 5_012,
        status: 401,
        hook: null,
        code: 'unauthorized',
        reason: 'Missing or invalid token.',
        eventIds: [],
      }),
    ];
    for (const r of made) b.add(r);
    const row = b.build()!;
    const stored = JSON.parse(row.records as string) as {
      v: number;
      at: number;
      shapes: unknown[];
      records: unknown[][];
    };
    assert.equal(stored.v, 2);
    assert.equal(stored.shapes.length, 3, 'the wake from 203.0.113.7, the 401, the wake from 198.51.100.2');
    assert.deepEqual(
      stored.records.map((r) => [r[1], r[2], r[3]]),
      [
        [0, 0, 12_345],
        [3, 0, 1],
        [-10, 1, 250],
        [10, 0, 3_000_500],
        [11, 2, 250],
        [12, 1, 250],
      ],
    );
    assert.deepEqual(readRequestBatch(row.records), made);
    assert.deepEqual([row.min_at, row.max_at], [4_990, 5_012]);
  });

  it('reads rows written as an array of every field, text or packed', () => {
    const made = [
      record(),
      record({ id: idOf(2), status: 503, code: 'store_unavailable', reason: 'x', durationMs: 1.23456, payload: '{}' }),
    ];
    const text = JSON.stringify(
      made.map((r) => [
        r.id,
        r.at,
        r.method,
        r.path,
        r.hook,
        r.client,
        r.status,
        r.code,
        r.reason,
        r.durationMs,
        r.eventIds,
        r.runIds,
        r.payload,
      ]),
    );
    assert.deepEqual(readRequestBatch(text), made);
    assert.deepEqual(readRequestBatch(packRecords(text)), made);
  });

  it('refuses a batch in a format it does not know, naming it', () => {
    assert.throws(() => readRequestBatch('{"v":3,"records":[]}'), /format 3/);
  });

  it('keeps a record as it was when added', () => {
    const b = new RequestBatchBuilder();
    const r = record();
    b.add(r);
    r.status = 499;
    r.eventIds = [];
    assert.deepEqual(readRequestBatch(b.build()!.records), [record()]);
  });

  it('counts about as many characters as the records take encoded, payloads included', () => {
    for (const payload of [null, 'x'.repeat(10_000), '{"text":"New email from alerts@example.com"}']) {
      const b = new RequestBatchBuilder();
      for (let i = 0; i < 50; i++)
        b.add(record({ id: idOf(i), payload, reason: i % 2 === 0 ? null : 'Missing or invalid token.' }));
      const encoded = unpackRecords(b.build()!.records).length;
      assert.ok(Math.abs(b.chars - encoded) <= encoded * 0.2, `${b.chars} counted, ${encoded} encoded`);
    }
  });

  it('stores a batch as JSON text below PACK_FROM_CHARS and compressed from it, reading back the same records', () => {
    const small = new RequestBatchBuilder();
    small.add(record());
    const text = small.build()!.records;
    assert.equal(typeof text, 'string');
    assert.ok(text.length < PACK_FROM_CHARS);

    const large = new RequestBatchBuilder();
    const made = Array.from({ length: 40 }, (_, i) =>
      record({ id: idOf(i), at: 1_000 + i, status: i % 3 === 0 ? 401 : 200 }),
    );
    for (const r of made) large.add(r);
    const packed = large.build()!.records;
    assert.ok(Buffer.isBuffer(packed), 'a BLOB');
    const json = unpackRecords(packed);
    assert.ok(
      json.length >= PACK_FROM_CHARS && packed.length * 3 < json.length,
      `${json.length} characters packed into ${packed.length} bytes`,
    );
    assert.deepEqual(readRequestBatch(packed), made);
    assert.equal(unpackRecords(json), json, 'text is read as it is');
  });

  it('names the statuses and hooks a batch holds, as a filter searches for them', () => {
    const b = new RequestBatchBuilder(0);
    for (const r of [
      record({ id: idOf(1) }),
      record({ id: idOf(2), status: 401, hook: null }),
      record({ id: idOf(3), status: 200, hook: 'gh "app"' }),
      record({ id: idOf(4) }),
    ])
      b.add(r);
    const row = b.build()!;
    assert.equal(row.statuses, ',200,401,');
    assert.equal(row.hooks, '"wake","gh \\"app\\""');
    assert.ok(Buffer.isBuffer(row.records), 'packed from 0 characters on');
  });
});
