import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { RequestRecord } from '../request-record.js';
import { readRequestBatch, RequestBatchBuilder } from './request-batch.js';

const record = (o: Partial<RequestRecord> = {}): RequestRecord => ({
  id: '01900000-0000-7000-8000-000000000001', at: 1_000, method: 'POST', path: '/hooks/wake', hook: 'wake',
  client: '203.0.113.7', status: 200, code: null, reason: null, durationMs: 0.25,
  eventIds: ['01900000-0000-7000-8000-00000000000a'], runIds: [], payload: null, ...o,
});

describe('RequestBatchBuilder', () => {
  it('builds a row whose records read back in the order added, with the id and time bounds', () => {
    const b = new RequestBatchBuilder();
    assert.equal(b.build(), null, 'nothing added');
    const later = record({ id: '01900000-0000-7000-8000-000000000002', at: 2_000, status: 202, runIds: ['r1'], eventIds: [] });
    const first = record();
    const again = record({ status: 503, code: 'store_unavailable', reason: 'The store cannot write.' });
    b.add(later);
    b.add(first);
    b.add(again);
    const row = b.build()!;
    assert.deepEqual([row.min_id, row.max_id, row.min_at, row.max_at, row.count], [first.id, later.id, 1_000, 2_000, 3]);
    assert.deepEqual(readRequestBatch(row.records), [later, first, again]);
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
      for (let i = 0; i < 50; i++) b.add(record({ payload, reason: i % 2 === 0 ? null : 'Missing or invalid token.' }));
      const encoded = b.build()!.records.length;
      assert.ok(Math.abs(b.chars - encoded) <= encoded * 0.2, `${b.chars} counted, ${encoded} encoded`);
    }
  });
});
