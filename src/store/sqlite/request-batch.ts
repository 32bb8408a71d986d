import { brotliCompress, brotliCompressSync, brotliDecompressSync, constants } from 'node:zlib';
import type { RequestRecord } from '../request-record.js';

/**
 * A batch of request records as one row of `request_batches`: the records (JSON text, see `Stored`,
 * in the order they were written; a later entry replaces an earlier one with the same id), packed
 * when the batch is large (`PACK_FROM_CHARS`), and what the queries need without reading them.
 */
export interface RequestBatchRow {
  seq: number;
  min_id: string;
  max_id: string;
  /** The largest `max_id` of this batch and every batch before it: listings stop on it. */
  upto_id: string;
  min_at: number;
  max_at: number;
  count: number;
  /** The JSON text, or, from `PACK_FROM_CHARS` on, that text compressed with Brotli (a BLOB). */
  records: string | Buffer;
  /**
   * The statuses the records hold, as `,200,401,`, and the hooks they name, JSON-encoded and
   * joined with commas: a filtered listing passes over a batch that cannot match without
   * unpacking it. `null` in rows written before these columns (their JSON text is searched instead).
   */
  statuses: string | null;
  hooks: string | null;
}

/** What a batch row is written from. */
export type NewRequestBatch = Omit<RequestBatchRow, 'seq' | 'upto_id'>;

/** A batch encoded but not yet packed: its row without `records`, and the records' JSON text. */
export type EncodedBatch = Omit<NewRequestBatch, 'records'> & { json: string };

/** A record as batches stored it before `Stored`: every field, in order. Such rows are still read. */
type Encoded = [
  id: string,
  at: number,
  method: string,
  path: string,
  hook: string | null,
  client: string,
  status: number,
  code: string | null,
  reason: string | null,
  durationMs: number,
  eventIds: readonly string[],
  runIds: readonly string[],
  payload: string | null,
];

/** What records of one kind have in common: a busy gateway's records are mostly of a few kinds. */
type Shape = [
  method: string,
  path: string,
  hook: string | null,
  client: string,
  status: number,
  code: string | null,
  reason: string | null,
];

/**
 * A record in a batch: its own fields, its kind (a place in the batch's `shapes`), its time in ms
 * after the batch's `at` (below it for a record written late), its duration in whole µs (the
 * recorder measures to the µs), and its payload last, when it has one. Whole numbers this small
 * encode in a third of the time a time in ms or a fractional duration takes.
 */
type Compact =
  | [id: string, at: number, shape: number, durationUs: number, eventIds: readonly string[], runIds: readonly string[]]
  | [
      id: string,
      at: number,
      shape: number,
      durationUs: number,
      eventIds: readonly string[],
      runIds: readonly string[],
      payload: string | null,
    ]
  | [
      id: string,
      at: number,
      shape: number,
      durationUs: number,
      eventIds: readonly string[],
      runIds: readonly string[],
      payload: string | null,
      headers: Readonly<Record<string, string>>,
    ];

/** A batch's JSON text: `v` is 2 (rows written before it hold a JSON array of `Encoded`). */
interface Stored {
  v: 2;
  at: number;
  shapes: Shape[];
  records: Compact[];
}

const decode = ([
  id,
  at,
  method,
  path,
  hook,
  client,
  status,
  code,
  reason,
  durationMs,
  eventIds,
  runIds,
  payload,
]: Encoded): RequestRecord => ({
  id,
  at,
  method,
  path,
  hook,
  client,
  status,
  code,
  reason,
  durationMs,
  eventIds,
  runIds,
  payload,
  headers: null,
});

const expand = ({ at: base, shapes, records }: Stored): RequestRecord[] =>
  records.map(([id, at, shape, durationUs, eventIds, runIds, payload, headers]) => {
    const [method, path, hook, client, status, code, reason] = shapes[shape]!;
    return {
      id,
      at: base + at,
      method,
      path,
      hook,
      client,
      status,
      code,
      reason,
      durationMs: durationUs / 1000,
      eventIds,
      runIds,
      payload: payload ?? null,
      headers: headers ?? null,
    };
  });

/**
 * About how many characters a record takes in its batch, without encoding it: 60 for the fields of
 * about a fixed size (its own id, time, kind, duration, the brackets and commas), 39 for each event
 * or run id (quoted, with its comma), and its payload's length (escapes aside). Each kind of record
 * counts once, as the batch meets it.
 */
const approxChars = (r: RequestRecord): number =>
  60 +
  (r.payload === null ? 0 : r.payload.length + 3) +
  (r.headers === null ? 0 : JSON.stringify(r.headers).length + 1) +
  39 * (r.eventIds.length + r.runIds.length);

/**
 * A batch whose JSON reaches this many characters (about a dozen records) is stored compressed.
 * Brotli at quality 1 takes records from about 96 characters to 32 bytes (a busy gateway's batch of
 * 512 records: 49 KB to 16 KB) for about 0.4 µs a record, on libuv's thread pool (`packRecordsLater`),
 * and writing the smaller row costs the commit and the checkpoint less than text would; unpacking
 * one for a read takes about 1 µs a record. Smaller batches (a quiet gateway's) gain little and
 * stay text.
 */
export const PACK_FROM_CHARS = 2048;

/**
 * Quality 1, and the text's length as a hint: without it the encoder sets up for its largest
 * input, which for a batch of 512 records took 5 times as long as compressing it (about 1.5 ms
 * against 0.3).
 */
const packOptions = (json: string) => ({
  params: { [constants.BROTLI_PARAM_QUALITY]: 1, [constants.BROTLI_PARAM_SIZE_HINT]: json.length },
});

/** A batch's JSON text compressed, here and now. */
export function packRecords(json: string): Buffer {
  return brotliCompressSync(json, packOptions(json));
}

/**
 * Compresses a batch's JSON text on libuv's thread pool, off the thread serving requests, and
 * calls back with it, or with the text itself should compressing fail (the records are kept
 * either way; `unpackRecords` reads both).
 */
export function packRecordsLater(json: string, done: (records: string | Buffer) => void): void {
  brotliCompress(json, packOptions(json), (error, packed) => done(error === null ? packed : json));
}

/** A batch's row with its records as they are stored. */
export function batchRow({ json: _json, ...row }: EncodedBatch, records: string | Buffer): NewRequestBatch {
  return { ...row, records };
}

/** A batch's JSON text, from the `records` column as stored. */
export function unpackRecords(records: string | Buffer): string {
  return typeof records === 'string' ? records : brotliDecompressSync(records).toString('utf8');
}

/**
 * Gathers records into a batch. A record's fields are copied as it is added (a later change to the
 * record is not in the batch), and the batch is encoded once, when it is built: one
 * `JSON.stringify` of the whole array costs less than half of one per record. What records of one
 * kind share (method, path, hook, client, status, code, reason) is written once a batch. A record
 * added again under its id (its answer, after the version queued with its action) takes the
 * earlier version's place: a batch holds one version of each record, and `count` counts records.
 * (Rows written before batches did so may hold several versions of a record: readers take the last.)
 */
export class RequestBatchBuilder {
  private readonly rows: Compact[] = [];
  /** The kinds of record the batch holds, each once; `kinds` finds one by its JSON text, `lastKind` is the one met last. */
  private readonly shapes: Shape[] = [];
  private readonly kinds = new Map<string, number>();
  private lastKind = -1;
  /** The time the records' times are counted from: the first one's. */
  private at: number | null = null;
  /**
   * Each record's place in `rows`, by id: made when a record comes in at or below `maxId`, the
   * first that could be a version of one here. Ids are UUIDv7s made as requests arrive, so records
   * mostly come in order, and a batch of those never needs the map (0.3 to 0.6 microseconds a record).
   */
  private places: Map<string, number> | null = null;
  /** The characters counted for the record at each place. */
  private readonly sizes: number[] = [];
  /** What the records added hold; a version replaced may leave one no record holds now (a filter then reads the batch for nothing). */
  private readonly statuses = new Set<number>();
  private readonly hooks = new Set<string>();
  private minId = '';
  private maxId = '';
  private minAt = Number.POSITIVE_INFINITY;
  private maxAt = Number.NEGATIVE_INFINITY;
  /** About how many characters the records take encoded (payloads kept with `gateway.recordPayloads`). */
  chars = 0;

  get count(): number {
    return this.rows.length;
  }

  /** @param packFromChars batches whose JSON is at least this long are compressed (tests pass 0). */
  constructor(private readonly packFromChars = PACK_FROM_CHARS) {}

  add(r: RequestRecord): void {
    const chars = approxChars(r);
    const place = this.placeOf(r.id);
    if (place === undefined) {
      this.places?.set(r.id, this.rows.length);
      this.rows.push(this.compact(r));
      this.sizes.push(chars);
    } else {
      this.rows[place] = this.compact(r);
      this.chars -= this.sizes[place]!;
      this.sizes[place] = chars;
    }
    this.chars += chars;
    this.statuses.add(r.status);
    if (r.hook !== null) this.hooks.add(r.hook);
    if (this.minId === '' || r.id < this.minId) this.minId = r.id;
    if (r.id > this.maxId) this.maxId = r.id;
    if (r.at < this.minAt) this.minAt = r.at;
    if (r.at > this.maxAt) this.maxAt = r.at;
  }

  /** The record as the batch holds it. */
  private compact(r: RequestRecord): Compact {
    this.at ??= r.at;
    const shape = this.kindOf(r);
    const at = r.at - this.at;
    const durationUs = Math.round(r.durationMs * 1000);
    if (r.headers !== null) return [r.id, at, shape, durationUs, r.eventIds, r.runIds, r.payload, r.headers];
    return r.payload === null
      ? [r.id, at, shape, durationUs, r.eventIds, r.runIds]
      : [r.id, at, shape, durationUs, r.eventIds, r.runIds, r.payload];
  }

  /** The record's kind: the last one met, when it is that (seven comparisons), else found by its text or added. */
  private kindOf(r: RequestRecord): number {
    const last = this.shapes[this.lastKind];
    if (
      last !== undefined &&
      last[4] === r.status &&
      last[1] === r.path &&
      last[3] === r.client &&
      last[2] === r.hook &&
      last[0] === r.method &&
      last[5] === r.code &&
      last[6] === r.reason
    )
      return this.lastKind;
    const shape: Shape = [r.method, r.path, r.hook, r.client, r.status, r.code, r.reason];
    const text = JSON.stringify(shape);
    let kind = this.kinds.get(text);
    if (kind === undefined) {
      kind = this.shapes.push(shape) - 1;
      this.kinds.set(text, kind);
      this.chars += text.length + 1;
    }
    this.lastKind = kind;
    return kind;
  }

  /** Where the record with this id is in `rows`, if it is. */
  private placeOf(id: string): number | undefined {
    if (id > this.maxId) return undefined;
    this.places ??= new Map(this.rows.map((row, i) => [row[0], i]));
    return this.places.get(id);
  }

  /** The batch encoded, its records not yet packed; `null` when nothing was added. */
  encode(): EncodedBatch | null {
    if (this.rows.length === 0) return null;
    return {
      min_id: this.minId,
      max_id: this.maxId,
      min_at: this.minAt,
      max_at: this.maxAt,
      count: this.rows.length,
      json: JSON.stringify({ v: 2, at: this.at ?? 0, shapes: this.shapes, records: this.rows } satisfies Stored),
      statuses: `,${[...this.statuses].join(',')},`,
      hooks: [...this.hooks].map((h) => JSON.stringify(h)).join(','),
    };
  }

  /** Whether an encoded batch's records are stored compressed. */
  packs(batch: EncodedBatch): boolean {
    return batch.json.length >= this.packFromChars;
  }

  /** The batch's row, its records packed here and now when they are stored compressed; `null` when nothing was added. */
  build(): NewRequestBatch | null {
    const batch = this.encode();
    if (batch === null) return null;
    return batchRow(batch, this.packs(batch) ? packRecords(batch.json) : batch.json);
  }
}

/** A batch's records in the order they were written (a later one replaces an earlier one with its id). */
export function readRequestBatch(records: string | Buffer): RequestRecord[] {
  const stored = JSON.parse(unpackRecords(records)) as Encoded[] | Stored;
  if (Array.isArray(stored)) return stored.map(decode);
  if (stored.v !== 2) throw new Error(`a request batch of format ${String(stored.v)}, which this hookgate cannot read`);
  return expand(stored);
}

/** How long after a request's id its last record can still be written (a request's whole life, with room to spare). */
const RECORD_WINDOW_MS = 60 * 60 * 1000;

/**
 * The smallest id made `RECORD_WINDOW_MS` after the given UUIDv7's time: every batch holding a
 * record of that id has a `max_id` below it. `null` for an id that is not a UUIDv7 (no bound).
 */
export function recordWindowEnd(id: string): string | null {
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-7/.test(id)) return null;
  const ms = Number.parseInt(id.slice(0, 8) + id.slice(9, 13), 16) + RECORD_WINDOW_MS;
  const hex = ms.toString(16).padStart(12, '0');
  return hex.length > 12 ? null : `${hex.slice(0, 8)}-${hex.slice(8)}`;
}
