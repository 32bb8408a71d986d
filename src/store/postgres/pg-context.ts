import { createHash } from 'node:crypto';
import type pg from 'pg';
import type { WorkSignal } from '../types.js';

/** What the PostgreSQL store's parts share. */
export interface PgContext {
  pool: pg.Pool;
  /** The NOTIFY channel of this schema. */
  channel: string;
  /**
   * The lease clock as a query parameter: `null` in production, so SQL falls back to the
   * database's own clock (`hookgate_now_ms()`); a test clock's time otherwise.
   */
  clockParam(): number | null;
  /** Runs `fn` in a transaction on one pooled client; rolls back when it throws. */
  tx<T>(fn: (client: pg.PoolClient) => Promise<T>): Promise<T>;
  /** Refuses writes in `read` mode. */
  checkWritable(): void;
  /** False in `read` mode. */
  writable: boolean;
  /** How long the pool waits for one query's answer. */
  queryTimeoutMs: number;
}

/** PostgreSQL's bound on identifiers, channel names included (NAMEDATALEN - 1 bytes). */
const MAX_CHANNEL_BYTES = 63;

/**
 * The NOTIFY channel of a schema: `hg_<schema>`. A schema name may take all 63 bytes, and
 * `pg_notify` refuses a longer channel (where `LISTEN` would quietly truncate it), so a long
 * name keeps a prefix and a hash of the whole: still one channel per schema.
 */
export function channelFor(schema: string): string {
  const channel = `hg_${schema}`;
  if (Buffer.byteLength(channel) <= MAX_CHANNEL_BYTES) return channel;
  const hash = createHash('sha256').update(schema).digest('hex').slice(0, 16);
  return `hg_${schema.slice(0, MAX_CHANNEL_BYTES - 3 - 17)}_${hash}`;
}

/** `COALESCE($n::bigint, hookgate_now_ms())`: the lease clock in SQL. */
export const nowSql = (n: number): string => `COALESCE($${n}::bigint, hookgate_now_ms())`;

/**
 * The lease clock read once per statement (a subquery), for comparisons an index should serve: the
 * clock function is volatile, and a comparison with it is evaluated row by row, never by an index.
 */
export const nowOnceSql = (n: number): string => `(SELECT ${nowSql(n)})`;

/**
 * A statement over a backlog of `events` that may take longer than the pool's query timeout:
 * `perEventMs` for each, never less than the pool's. (`pg` reads `query_timeout` from a query's
 * config as from the client's; its types only know the client's.)
 */
export function backlogQuery(
  ctx: Pick<PgContext, 'queryTimeoutMs'>,
  text: string,
  values: readonly unknown[],
  events: number,
  perEventMs: number,
): pg.QueryConfig {
  return {
    text,
    values: [...values],
    query_timeout: Math.max(ctx.queryTimeoutMs, events * perEventMs),
  } as pg.QueryConfig;
}

/** A work signal as a NOTIFY payload, and back. The client goes last: an IPv6 address has colons. */
export function encodeSignal(s: WorkSignal): string {
  switch (s.kind) {
    case 'runs':
    case 'deliveries':
    case 'published':
    case 'subscriptions':
    case 'holds':
      return s.kind;
    case 'finished':
      return `finished:${s.runId}`;
    case 'heartbeat':
      return `heartbeat:${s.agentId}`;
    case 'lockout':
      return `lockout:${s.lockedUntil}:${s.client}`;
  }
}

export function decodeSignal(payload: string): WorkSignal | null {
  if (
    payload === 'runs' ||
    payload === 'deliveries' ||
    payload === 'published' ||
    payload === 'subscriptions' ||
    payload === 'holds'
  )
    return { kind: payload };
  const colon = payload.indexOf(':');
  if (colon === -1) return null;
  const kind = payload.slice(0, colon);
  const rest = payload.slice(colon + 1);
  if (kind === 'finished') return { kind, runId: rest };
  if (kind === 'heartbeat') return { kind, agentId: rest };
  if (kind === 'lockout') {
    const second = rest.indexOf(':');
    const lockedUntil = Number(rest.slice(0, second));
    return second === -1 || !Number.isFinite(lockedUntil)
      ? null
      : { kind, lockedUntil, client: rest.slice(second + 1) };
  }
  return null;
}

/** Sends signals in the transaction of `client` (delivered to every listener when it commits). */
export async function notify(
  client: pg.ClientBase | pg.Pool,
  channel: string,
  signals: readonly WorkSignal[],
): Promise<void> {
  if (signals.length === 0) return;
  await client.query('SELECT pg_notify($1, s) FROM unnest($2::text[]) AS s', [
    channel,
    [...new Set(signals.map(encodeSignal))],
  ]);
}
