import pg from 'pg';
import type { Clock } from '../../common/clock.js';
import type { Store } from '../store.js';
import type { WorkSignal } from '../types.js';
import { createPgDeliveryQueue } from './create-pg-delivery-queue.js';
import { createPgGroupCommit } from './create-pg-group-commit.js';
import { createPgHeartbeats } from './create-pg-heartbeats.js';
import { createPgIngress } from './create-pg-ingress.js';
import { createPgListener, type PgListener } from './create-pg-listener.js';
import { createPgLockouts } from './create-pg-lockouts.js';
import { createPgRetention } from './create-pg-retention.js';
import { createPgReader } from './create-pg-reader.js';
import { createPgCancelRun } from './create-pg-cancel-run.js';
import { createPgRequestLog } from './create-pg-request-log.js';
import { createPgRunQueue } from './create-pg-run-queue.js';
import { migratePostgres, readSchemaVersion } from './migrate-postgres.js';
import { PG_MIGRATIONS } from './migrations.js';
import type { PgContext } from './pg-context.js';

export interface PostgresStoreOptions {
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
}

const INT8_OID = 20;

/** `bigint` columns (millisecond times, counts) as numbers: every value stored fits a double exactly. */
const types = {
  getTypeParser: ((oid: number, format?: string) =>
    oid === INT8_OID ? (v: string) => Number(v) : pg.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser,
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
    options: `-c search_path=${schema}`,
    types,
    connectionTimeoutMillis: 10_000,
    application_name: 'hookgate',
  };
  const pool = new pg.Pool({ ...connection, max: options.poolSize, idleTimeoutMillis: 30_000 });
  pool.on('error', () => undefined);
  const listeners = new Set<(signal: WorkSignal) => void>();
  let listener: PgListener | undefined;
  try {
    const client = await pool.connect();
    try {
      if (mode === 'serve') await migratePostgres(client, schema);
      else {
        const version = await readSchemaVersion(client, schema);
        if (version !== PG_MIGRATIONS.length) {
          throw new Error(`schema ${schema} is at version ${version ?? 'none'}, this hookgate expects ${PG_MIGRATIONS.length}: start the gateway once to migrate it`);
        }
      }
    } finally {
      client.release();
    }
    const dispatch = (signal: WorkSignal): void => {
      for (const l of listeners) {
        try {
          l(signal);
        } catch {
          // A listener's failure is its own.
        }
      }
    };
    if (mode === 'serve') listener = await createPgListener(connection, `hg_${schema}`, dispatch, () => undefined);
  } catch (error) {
    await pool.end().catch(() => undefined);
    throw new Error(`cannot open the store in ${where}: ${(error as Error).message}`, { cause: error });
  }

  const ctx: PgContext = {
    pool,
    channel: `hg_${schema}`,
    writable: mode !== 'read',
    clockParam: () => (options.clock === undefined ? null : options.clock.now()),
    checkWritable() {
      if (mode === 'read') throw new Error('store is read-only');
    },
    async tx(fn) {
      ctx.checkWritable();
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        const result = await fn(client);
        await client.query('COMMIT');
        return result;
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw error;
      } finally {
        client.release();
      }
    },
  };
  const group = createPgGroupCommit(pool, ctx.channel);
  let closed = false;

  return {
    shared: true,
    ...createPgIngress(ctx, group),
    ...createPgReader(ctx),
    ...createPgRunQueue(ctx),
    ...createPgCancelRun(ctx),
    ...createPgRequestLog(ctx, group),
    ...createPgHeartbeats(ctx),
    ...createPgDeliveryQueue(ctx, group),
    ...createPgLockouts(ctx),
    ...createPgRetention(ctx),
    subscribe(l) {
      listeners.add(l);
      return () => listeners.delete(l);
    },
    async close() {
      if (closed) return;
      closed = true;
      await group.drain();
      listeners.clear();
      await listener?.close();
      await pool.end();
    },
  };
}
