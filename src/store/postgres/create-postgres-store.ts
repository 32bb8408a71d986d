import pg from 'pg';
import type { Clock } from '../../common/clock.js';
import { StoreMissingError } from '../sqlite/lock-database.js';
import { createSignalHub } from '../create-signal-hub.js';
import type { Store } from '../store.js';
import { createPgDeliveryQueue } from './create-pg-delivery-queue.js';
import { createPgGroupCommit } from './create-pg-group-commit.js';
import { createPgHeartbeats } from './create-pg-heartbeats.js';
import { createStallWatch } from '../create-stall-watch.js';
import { createPgIngress } from './create-pg-ingress.js';
import { createPgListener, type PgListener } from './create-pg-listener.js';
import { createPgLockouts } from './create-pg-lockouts.js';
import { createPgRetention } from './create-pg-retention.js';
import { createPgReader } from './create-pg-reader.js';
import { createPgCancelRun } from './create-pg-cancel-run.js';
import { createPgRequestLog } from './create-pg-request-log.js';
import { createPgRunQueue } from './create-pg-run-queue.js';
import { createPgStats } from './create-pg-stats.js';
import { createPgEventLog } from './create-pg-event-log.js';
import { createPgSubscriptions } from './create-pg-subscriptions.js';
import { createPgHolds } from './create-pg-holds.js';
import { createPgRelayQueue } from './create-pg-relay-queue.js';
import type { StoreObserver } from '../store-stats.js';
import { migratePostgres, readSchemaVersion } from './migrate-postgres.js';
import { PG_MIGRATIONS } from './migrations.js';
import { StoreOpenError } from '../store-open-error.js';
import { createPgTransaction } from './create-pg-transaction.js';
import { channelFor, type PgContext } from './pg-context.js';

interface PostgresStoreOptions {
  /** `postgres://user:pass@host:5432/db`. */
  url: string;
  /** Schema holding the tables (created when serving). */
  schema: string;
  /** Connections in the pool. */
  poolSize: number;
  /** `serve` migrates and listens; `read` and `write` need a migrated schema. */
  mode: 'serve' | 'read' | 'write';
  /** Replaces the database's clock for leases (tests only). */
  clock?: Clock;
  /** Sees each ingress group commit (metrics). */
  observer?: StoreObserver;
  /** Replaces `LOCK_TIMEOUT_MS` (tests). */
  lockTimeoutMs?: number;
  /** Replaces `QUERY_TIMEOUT_MS` (tests). */
  queryTimeoutMs?: number;
  /** Runs a claim's held-mark passes go through in all (tests). @default MARK_BATCH (held-keys.ts) */
  heldMarkBatch?: number;
  /** Ready runs past which a claim looks session by session (tests). @default CLAIM_SCAN (pg-claim-candidates.ts) */
  claimScan?: number;
  /** How long an ingress write may go unfinished before new ones are refused (tests). @default STALL_MS */
  stallMs?: number;
}

const INT8_OID = 20;
/**
 * How long a statement waits for a lock another session holds (`lock_timeout`) before it fails,
 * and the ingress answers 503 `store_unavailable`: a table locked by a migration or a manual
 * `LOCK TABLE` must not hold every request unanswered for as long as it lasts. Hookgate's own waits
 * (an idempotency key inserted by two replicas at once, a budget's advisory lock) take
 * milliseconds. Start-up migrations wait without a limit.
 */
const LOCK_TIMEOUT_MS = 2_000;
/**
 * How long the client waits for any statement's answer (`query_timeout`). A server that stops
 * answering without closing the connection (a network that drops packets) would otherwise hold a
 * request until TCP keepalive gives up, minutes later; past this it is answered 503 and the
 * connection is dropped. Far above any statement Hookgate makes (pruning goes in small batches).
 */
const QUERY_TIMEOUT_MS = 30_000;

/** `bigint` columns (millisecond times, counts) as numbers: every value stored fits a double exactly. */
const types = {
  getTypeParser: ((oid: number, format?: string) =>
    oid === INT8_OID
      ? (v: string) => Number(v)
      : pg.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser,
};

/** Where the store connects, for messages: never the password. */
export function describeUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.hostname}:${u.port || '5432'}${u.pathname}`;
  } catch {
    return 'the configured database';
  }
}

/** Opens the PostgreSQL store a fleet of replicas shares. */
export async function createPostgresStore(options: PostgresStoreOptions): Promise<Store> {
  const { schema, mode } = options;
  const where = `PostgreSQL at ${describeUrl(options.url)} (schema ${schema})`;
  const connection: pg.ClientConfig = {
    connectionString: options.url,
    options: `-c search_path=${schema} -c lock_timeout=${options.lockTimeoutMs ?? LOCK_TIMEOUT_MS}`,
    types,
    connectionTimeoutMillis: 10_000,
    query_timeout: options.queryTimeoutMs ?? QUERY_TIMEOUT_MS,
    application_name: 'hookgate',
    // TCP keepalives find a connection a NAT or firewall dropped without a word; for the LISTEN
    // connection this is what turns a silent loss into an error, then a reconnect.
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
  };
  const pool = new pg.Pool({ ...connection, max: options.poolSize, idleTimeoutMillis: 30_000 });
  // An idle connection whose backend ended leaves the pool (pg-pool's own listener); one checked out
  // for a transaction, when the transaction releases it (create-pg-transaction.ts).
  pool.on('error', () => undefined);
  const transact = createPgTransaction(pool);
  const channel = channelFor(schema);
  const signals = createSignalHub();
  let listener: PgListener | undefined;
  try {
    const client = await pool.connect();
    try {
      if (mode === 'serve') await migratePostgres(client, schema);
      else {
        const version = await readSchemaVersion(client, schema);
        // A schema no gateway created yet reads as empty, like a SQLite file that does not exist.
        if (version === null) throw new StoreMissingError(where);
        if (version !== PG_MIGRATIONS.length) {
          throw new StoreOpenError(
            'store_outdated',
            `${where} is at schema version ${version}, this hookgate expects ${PG_MIGRATIONS.length}: ` +
              (version < PG_MIGRATIONS.length
                ? 'start the gateway once to migrate it'
                : 'run the hookgate that migrated it'),
          );
        }
      }
    } finally {
      client.release();
    }
    if (mode === 'serve') listener = await createPgListener(connection, channel, signals.emit, () => undefined);
  } catch (error) {
    await pool.end().catch(() => undefined);
    if (error instanceof StoreMissingError || error instanceof StoreOpenError) throw error;
    throw new StoreOpenError('store_open_failed', `cannot open the store in ${where}: ${(error as Error).message}`, {
      cause: error,
    });
  }

  const ctx: PgContext = {
    pool,
    channel,
    writable: mode !== 'read',
    queryTimeoutMs: options.queryTimeoutMs ?? QUERY_TIMEOUT_MS,
    clockParam: () => (options.clock === undefined ? null : options.clock.now()),
    checkWritable() {
      if (mode === 'read') throw new Error('store is read-only');
    },
    async tx(fn) {
      ctx.checkWritable();
      return transact(fn);
    },
  };
  // A database that stops answering turns new ingress writes away at once (503) instead of
  // queueing them behind the writes it has not finished.
  const stalls = createStallWatch(options.stallMs);
  const group = createPgGroupCommit(pool, ctx.channel, options.observer, stalls);
  let closed = false;

  return {
    shared: true,
    ...createPgIngress(ctx, group, stalls),
    ...createPgReader(ctx),
    ...createPgRunQueue(ctx, options.heldMarkBatch, options.claimScan),
    ...createPgCancelRun(ctx),
    ...createPgRequestLog(ctx, group),
    ...createPgHeartbeats(ctx),
    ...createPgDeliveryQueue(ctx, group),
    ...createPgLockouts(ctx),
    ...createPgRetention(ctx),
    ...createPgStats(ctx),
    ...createPgEventLog(ctx),
    ...createPgSubscriptions(ctx),
    ...createPgHolds(ctx),
    ...createPgRelayQueue(ctx),
    subscribe: signals.subscribe,
    async close() {
      if (closed) return;
      closed = true;
      await group.drain();
      signals.clear();
      await listener?.close();
      await pool.end();
    },
  };
}
