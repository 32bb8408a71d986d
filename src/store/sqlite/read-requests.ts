import type Database from 'better-sqlite3';
import type { ListRequestsOptions, RequestRecord } from '../request-record.js';
import { DEFAULT_LIMIT } from '../rows.js';
import { readRequestBatch, unpackRecords, type RequestBatchRow } from './request-batch.js';

/** Arrival order, newest first (ids are UUIDv7s, and one id is listed once). */
const newestFirst = (a: RequestRecord, b: RequestRecord): number => (a.id < b.id ? 1 : -1);

/**
 * Lists request records from their batches (see create-sqlite-request-log.ts), on the serving
 * thread's connection or a read thread's (read-worker.ts): newest batch first, stopping once no
 * older batch can hold an id the listing still needs.
 */
export function createRequestsReader(db: Database.Database): (o?: ListRequestsOptions) => RequestRecord[] {
  // With a filter, a batch that cannot hold a match comes without its records: a substring test of
  // what it holds (its `statuses` and `hooks`, or the JSON text of a row written before them), no
  // unpacking or parsing. `@status` is `,<status>,` and `@hook` the JSON-encoded name, as they are written.
  const newest = db.prepare(
    `SELECT seq, upto_id, min_id, max_id,
      CASE WHEN (@status IS NULL OR instr(coalesce(statuses, records), @status) > 0)
        AND (@hook IS NULL OR instr(coalesce(hooks, records), @hook) > 0)
        THEN records END AS records
      FROM request_batches ORDER BY seq DESC`,
  );
  // Whether a batch's text holds a string: searched in place, or, when the batch is packed, its records to unpack.
  const mentionsOrPacked = db
    .prepare(
      `SELECT CASE WHEN typeof(records) = 'blob' THEN records ELSE instr(records, ?) > 0 END FROM request_batches WHERE seq = ?`,
    )
    .pluck();
  return (o) => {
    const limit = o?.limit ?? DEFAULT_LIMIT;
    const seen = new Set<string>();
    let found: RequestRecord[] = [];
    /** Packed batches passed over and unpacked for `mentions`, by seq: each is unpacked once a listing. */
    const unpacked = new Map<number, string>();
    const mentions = (text: string, seq: number): boolean => {
      const known = unpacked.get(seq);
      if (known !== undefined) return known.includes(text);
      const answer = mentionsOrPacked.get(text, seq) as number | Buffer | undefined;
      if (!Buffer.isBuffer(answer)) return answer === 1;
      const json = unpackRecords(answer);
      unpacked.set(seq, json);
      return json.includes(text);
    };
    // Newer batches passed over unread: a record read later may have its last version in one of them.
    const passed: Pick<RequestBatchRow, 'seq' | 'min_id' | 'max_id'>[] = [];
    const revisedIn = (id: string): boolean =>
      passed.some((b) => b.min_id <= id && id <= b.max_id && mentions(JSON.stringify(id), b.seq));
    const filter = {
      status: o?.status === undefined ? null : `,${o.status},`,
      hook: o?.hook === undefined ? null : JSON.stringify(o.hook),
    };
    type Row = Pick<RequestBatchRow, 'seq' | 'upto_id' | 'min_id' | 'max_id'> & { records: string | Buffer | null };
    for (const row of newest.iterate(filter) as IterableIterator<Row>) {
      if (found.length >= limit && row.upto_id < found[limit - 1]!.id) break;
      if (row.records === null) {
        passed.push(row);
        continue;
      }
      const records = readRequestBatch(row.records);
      for (let i = records.length - 1; i >= 0; i--) {
        const r = records[i]!;
        if (seen.has(r.id)) continue;
        seen.add(r.id);
        if (
          (o?.hook === undefined || r.hook === o.hook) &&
          (o?.status === undefined || r.status === o.status) &&
          !revisedIn(r.id)
        ) {
          found.push(r);
        }
      }
      if (found.length >= limit) found = found.sort(newestFirst).slice(0, limit);
    }
    return found.sort(newestFirst).slice(0, limit);
  };
}
