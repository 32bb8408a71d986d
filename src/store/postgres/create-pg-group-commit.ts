import { performance } from 'node:perf_hooks';
import type pg from 'pg';
import type { RequestRecord } from '../request-record.js';
import type { StoreObserver } from '../store-stats.js';
import type { StallWatch } from '../create-stall-watch.js';
import { isStoreUnavailable } from '../is-store-unavailable.js';
import type { NewDelivery, NewLogEvent, NewRun, NewSystemEvent, WorkSignal } from '../types.js';
import { logEventValues } from '../log-rows.js';
import { encodeSignal } from './pg-context.js';
import { encodeSource } from '../action-source.js';

/** An ingress write, as the group commit takes it. */
export type IngressWrite =
  | { kind: 'event'; event: NewSystemEvent }
  | { kind: 'run'; run: NewRun }
  | { kind: 'delivery'; delivery: NewDelivery }
  | { kind: 'request'; record: RequestRecord }
  /** An occurrence written on its own (an `event` mapping's, a coalesced run's). */
  | { kind: 'published'; event: NewLogEvent };

interface Pending {
  write: IngressWrite;
  resolve: () => void;
  reject: (error: unknown) => void;
}

export interface PgGroupCommit {
  submit(write: IngressWrite): Promise<void>;
  /** Resolves once every submitted write has settled. */
  drain(): Promise<void>;
}

/** Batches in flight at once; the next batch gathers meanwhile. */
const MAX_IN_FLIGHT = 2;
/**
 * Writes in one statement at most: after a stall (a slow disk, a failover) the queue is sent in
 * batches of this size, not as one statement that grows with the stall and may itself time out.
 */
export const MAX_BATCH_WRITES = 1000;
/**
 * Request records waiting at most. Every other write holds its request (and so a connection) until
 * it commits, so connections bound them; a record is queued for requests already answered too
 * (refusals), so during a stall under a flood of them the records past this are dropped (the
 * request log is a best-effort trail; the actions are never dropped).
 */
export const MAX_QUEUED_RECORDS = 10_000;

const signalOf = (w: IngressWrite): WorkSignal | null => {
  switch (w.kind) {
    case 'event':
      return w.event.mode === 'now' ? { kind: 'heartbeat', agentId: w.event.agentId } : null;
    case 'run':
      return { kind: 'runs' };
    case 'delivery':
      return { kind: 'deliveries' };
    case 'request':
      return null;
    case 'published':
      return { kind: 'published' };
  }
};

/** The occurrence a write publishes, if any. */
const publishedOf = (w: IngressWrite): NewLogEvent | undefined => {
  switch (w.kind) {
    case 'event':
      return w.event.published;
    case 'run':
      return w.run.published;
    case 'published':
      return w.event;
    default:
      return undefined;
  }
};

/** Appends `events` to the event log in the statement being built (`arr` adds a parameter). */
export function logEventsCte(events: readonly NewLogEvent[], arr: (items: unknown[], type: string) => string): string {
  const cols = events.map(logEventValues);
  const col = (i: number, type: string): string =>
    arr(
      cols.map((c) => c[i]),
      type,
    );
  return `INSERT INTO event_log (id, name, agent_id, request_id, created_at, data, untrusted)
      SELECT * FROM unnest(${col(0, 'text')}, ${col(1, 'text')}, ${col(2, 'text')}, ${col(3, 'text')}, ${col(4, 'bigint')},
        ${col(5, 'text')}, ${col(6, 'boolean')})`;
}

const clean = <T extends string | null>(text: T): T =>
  text?.includes('\u0000') ? (text.replaceAll('\u0000', '\uFFFD') as T) : text;

/** A request record whose text fields hold no U+0000 (the record itself when none does). */
function withoutNul(r: RequestRecord): RequestRecord {
  const texts = [r.path, r.hook, r.client, r.code, r.reason, r.payload];
  if (!texts.some((t) => t?.includes('\u0000'))) return r;
  return {
    ...r,
    path: clean(r.path),
    hook: clean(r.hook),
    client: clean(r.client),
    code: clean(r.code),
    reason: clean(r.reason),
    payload: clean(r.payload),
  };
}

/**
 * One statement for a batch: data-modifying CTEs insert each kind of row from arrays, and
 * `pg_notify` announces the work, all in the statement's own transaction, so a batch costs one
 * round trip and one commit (with `synchronous_commit` on, one WAL flush).
 */
export function batchStatement(writes: readonly IngressWrite[], channel: string): { text: string; values: unknown[] } {
  const values: unknown[] = [];
  const arr = (items: unknown[], type: string): string => {
    values.push(items);
    return `$${values.length}::${type}[]`;
  };
  const ctes: string[] = [];
  const events = writes.flatMap((w) => (w.kind === 'event' ? [w.event] : []));
  const runs = writes.flatMap((w) => (w.kind === 'run' ? [w.run] : []));
  const deliveries = writes.flatMap((w) => (w.kind === 'delivery' ? [w.delivery] : []));
  const published = writes.flatMap((w) => {
    const p = publishedOf(w);
    return p === undefined ? [] : [p];
  });
  if (published.length > 0) ctes.push(`p AS (${logEventsCte(published, arr)})`);
  const signalsOf = (w: IngressWrite): WorkSignal[] => {
    const s = signalOf(w);
    const out = s === null ? [] : [s];
    if (w.kind !== 'published' && publishedOf(w) !== undefined) out.push({ kind: 'published' });
    return out;
  };
  if (events.length > 0) {
    ctes.push(`e AS (INSERT INTO system_events (id, agent_id, session_key, text, mode, source, created_at)
      SELECT * FROM unnest(${arr(
        events.map((e) => e.id),
        'text',
      )}, ${arr(
        events.map((e) => e.agentId),
        'text',
      )},
        ${arr(
          events.map((e) => e.sessionKey),
          'text',
        )}, ${arr(
          events.map((e) => e.text),
          'text',
        )}, ${arr(
          events.map((e) => e.mode),
          'text',
        )},
        ${arr(
          events.map((e) => encodeSource(e.source)),
          'text',
        )}, ${arr(
          events.map((e) => e.createdAt),
          'bigint',
        )}))`);
  }
  if (runs.length > 0) {
    ctes.push(`r AS (INSERT INTO runs (id, state, agent_id, session_key, message, name, wake_mode, deliver, channel, recipient, model,
        thinking, timeout_seconds, source, created_at, coalesce_key, coalesce_until, hook)
      SELECT u.id, 'queued', u.agent_id, u.session_key, u.message, u.name, u.wake_mode, u.deliver, u.channel, u.recipient, u.model,
        u.thinking, u.timeout_seconds, u.source, u.created_at, u.coalesce_key, u.coalesce_until, u.hook
      FROM unnest(${arr(
        runs.map((r) => r.id),
        'text',
      )}, ${arr(
        runs.map((r) => r.agentId),
        'text',
      )}, ${arr(
        runs.map((r) => r.sessionKey),
        'text',
      )},
        ${arr(
          runs.map((r) => r.message),
          'text',
        )}, ${arr(
          runs.map((r) => r.name),
          'text',
        )}, ${arr(
          runs.map((r) => r.wakeMode),
          'text',
        )},
        ${arr(
          runs.map((r) => (r.deliver ? 1 : 0)),
          'integer',
        )}, ${arr(
          runs.map((r) => r.channel),
          'text',
        )}, ${arr(
          runs.map((r) => r.to),
          'text',
        )},
        ${arr(
          runs.map((r) => r.model),
          'text',
        )}, ${arr(
          runs.map((r) => r.thinking),
          'text',
        )}, ${arr(
          runs.map((r) => r.timeoutSeconds),
          'float8',
        )},
        ${arr(
          runs.map((r) => encodeSource(r.source)),
          'text',
        )}, ${arr(
          runs.map((r) => r.createdAt),
          'bigint',
        )},
        ${arr(
          runs.map((r) => r.coalesce?.key ?? null),
          'text',
        )},
        ${arr(
          runs.map((r) => (r.coalesce === undefined ? null : r.createdAt + r.coalesce.windowMs)),
          'bigint',
        )},
        ${arr(
          runs.map((r) => r.source.hook),
          'text',
        )})
        AS u (id, agent_id, session_key, message, name, wake_mode, deliver, channel, recipient, model, thinking, timeout_seconds, source, created_at,
          coalesce_key, coalesce_until, hook))`);
  }
  if (deliveries.length > 0) {
    ctes.push(`d AS (INSERT INTO deliveries (id, state, agent_id, channel, recipient, text, run_id, created_at, updated_at)
      SELECT u.id, 'pending', u.agent_id, u.channel, u.recipient, u.text, u.run_id, u.created_at, u.created_at
      FROM unnest(${arr(
        deliveries.map((d) => d.id),
        'text',
      )}, ${arr(
        deliveries.map((d) => d.agentId),
        'text',
      )},
        ${arr(
          deliveries.map((d) => d.channel),
          'text',
        )}, ${arr(
          deliveries.map((d) => d.to),
          'text',
        )}, ${arr(
          deliveries.map((d) => d.text),
          'text',
        )},
        ${arr(
          deliveries.map((d) => d.runId),
          'text',
        )}, ${arr(
          deliveries.map((d) => d.createdAt),
          'bigint',
        )})
        AS u (id, agent_id, channel, recipient, text, run_id, created_at))`);
  }
  // The last write of a record wins; one statement may not upsert the same row twice. A record is a
  // trail of what arrived: a NUL in it (a raw body, a field name in a refusal's reason), which
  // PostgreSQL text cannot hold, is kept as U+FFFD rather than failing the batch.
  const requests = [
    ...new Map(
      writes.flatMap((w) => (w.kind === 'request' ? [[w.record.id, withoutNul(w.record)] as const] : [])),
    ).values(),
  ];
  if (requests.length > 0) {
    ctes.push(`q AS (INSERT INTO requests (id, at, method, path, hook, client, status, code, reason, duration_ms, event_ids, run_ids, payload, headers)
      SELECT u.id, u.at, u.method, u.path, u.hook, u.client, u.status, u.code, u.reason, u.duration_ms,
        string_to_array(u.event_ids, ','), string_to_array(u.run_ids, ','), u.payload, u.headers
      FROM unnest(${arr(
        requests.map((r) => r.id),
        'text',
      )}, ${arr(
        requests.map((r) => r.at),
        'bigint',
      )}, ${arr(
        requests.map((r) => r.method),
        'text',
      )},
        ${arr(
          requests.map((r) => r.path),
          'text',
        )}, ${arr(
          requests.map((r) => r.hook),
          'text',
        )}, ${arr(
          requests.map((r) => r.client),
          'text',
        )},
        ${arr(
          requests.map((r) => r.status),
          'integer',
        )}, ${arr(
          requests.map((r) => r.code),
          'text',
        )}, ${arr(
          requests.map((r) => r.reason),
          'text',
        )},
        ${arr(
          requests.map((r) => r.durationMs),
          'float8',
        )}, ${arr(
          requests.map((r) => r.eventIds.join(',')),
          'text',
        )},
        ${arr(
          requests.map((r) => r.runIds.join(',')),
          'text',
        )}, ${arr(
          requests.map((r) => r.payload),
          'text',
        )}, ${arr(
          requests.map((r) => (r.headers === null ? null : JSON.stringify(r.headers))),
          'text',
        )})
        AS u (id, at, method, path, hook, client, status, code, reason, duration_ms, event_ids, run_ids, payload, headers)
      ON CONFLICT (id) DO UPDATE SET status = excluded.status, code = excluded.code, reason = excluded.reason,
        duration_ms = excluded.duration_ms, event_ids = excluded.event_ids, run_ids = excluded.run_ids, payload = excluded.payload,
        headers = excluded.headers)`);
  }
  const signals = [...new Set(writes.flatMap(signalsOf).map(encodeSignal))];
  values.push(channel);
  const channelParam = `$${values.length}`;
  const select =
    signals.length === 0
      ? 'SELECT 1'
      : `SELECT pg_notify(${channelParam}, s) FROM unnest(${arr(signals, 'text')}) AS s`;
  if (signals.length === 0) values.pop();
  return { text: `WITH ${ctes.join(',\n')}\n${select}`, values };
}

/**
 * Group commit for PostgreSQL: ingress writes submitted in one event-loop turn go to the database
 * as one statement (one round trip, one commit) of at most `MAX_BATCH_WRITES`; each write's promise
 * resolves only after that commit. While batches are in flight the next one gathers. A failed batch
 * is retried in halves down to single writes, so one bad write fails alone; a batch the database
 * could not take at all (unreachable, shutting down, out of space) fails whole at once.
 */
export function createPgGroupCommit(
  pool: pg.Pool,
  channel: string,
  observer?: StoreObserver,
  stallWatch?: StallWatch,
): PgGroupCommit {
  let queue: Pending[] = [];
  /** Request records in `queue`. */
  let queuedRecords = 0;
  let scheduled = false;
  let inFlight = 0;
  const settled = new Set<Promise<void>>();

  const run = async (batch: Pending[]): Promise<void> => {
    const started = performance.now();
    const watched = stallWatch?.begin();
    try {
      const { text, values } = batchStatement(
        batch.map((p) => p.write),
        channel,
      );
      try {
        await pool.query(text, values);
      } finally {
        if (watched !== undefined) stallWatch!.end(watched);
      }
      observer?.onCommit({ writes: batch.length, seconds: (performance.now() - started) / 1000, ok: true });
      for (const p of batch) p.resolve();
    } catch (error) {
      observer?.onCommit({ writes: batch.length, seconds: (performance.now() - started) / 1000, ok: false });
      // A database that cannot be reached fails every write alike: retrying them one by one
      // would only hold each request for another connection timeout.
      if (batch.length === 1 || isStoreUnavailable(error)) {
        for (const p of batch) p.reject(error);
        return;
      }
      // Halves, until the bad write is alone: one bad write among 1,000 costs about 20 statements, not 1,000.
      const half = Math.ceil(batch.length / 2);
      await Promise.all([run(batch.slice(0, half)), run(batch.slice(half))]);
    }
  };

  const flush = (): void => {
    scheduled = false;
    if (queue.length === 0 || inFlight >= MAX_IN_FLIGHT) return;
    const batch = queue.length <= MAX_BATCH_WRITES ? queue : queue.slice(0, MAX_BATCH_WRITES);
    queue = batch === queue ? [] : queue.slice(MAX_BATCH_WRITES);
    for (const p of batch) if (p.write.kind === 'request') queuedRecords--;
    inFlight++;
    if (queue.length > 0 && inFlight < MAX_IN_FLIGHT) {
      scheduled = true;
      setImmediate(flush);
    }
    const done: Promise<void> = run(batch).finally(() => {
      inFlight--;
      settled.delete(done);
      if (queue.length > 0 && !scheduled) {
        scheduled = true;
        setImmediate(flush);
      }
    });
    settled.add(done);
  };

  return {
    submit(write) {
      if (write.kind === 'request') {
        if (queuedRecords >= MAX_QUEUED_RECORDS)
          return Promise.reject(
            new Error(`${MAX_QUEUED_RECORDS} request records already wait for the database; this one is dropped`),
          );
        queuedRecords++;
      }
      return new Promise<void>((resolve, reject) => {
        queue.push({ write, resolve, reject });
        if (!scheduled) {
          scheduled = true;
          setImmediate(flush);
        }
      });
    },
    async drain() {
      while (queue.length > 0 || settled.size > 0) {
        if (queue.length > 0 && !scheduled) flush();
        await Promise.allSettled([...settled]);
        if (settled.size === 0 && queue.length > 0) flush();
      }
    },
  };
}
