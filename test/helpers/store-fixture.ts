import { describe } from 'node:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { createStore, type Store, type StoreMode } from '../../src/store/index.js';
import { StoreSchema, type StoreConfig } from '../../src/config/index.js';
import type { Clock } from '../../src/common/clock.js';
import { createManualClock, type ManualClock } from './manual-clock.js';

/** PostgreSQL used by the tests; the databases `test`, `root` and `postgres` exist on developer machines and CI. */
export const POSTGRES_URL = process.env.HOOKGATE_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

export type Driver = 'sqlite' | 'postgres';

/** A store in a place of its own (a temp file, or a fresh schema), on a manual clock. */
export interface StoreFixture {
  driver: Driver;
  config: StoreConfig;
  store: Store;
  clock: ManualClock;
  /** Opens another store on the same database (another process, a CLI reader, a replica). */
  open(mode?: StoreMode): Promise<Store>;
  /** Closes every store it opened and removes the database. */
  dispose(): Promise<void>;
}

let reachable: Promise<string | null> | undefined;

/** `null` when PostgreSQL answers, else why not. */
export function postgresUnavailable(): Promise<string | null> {
  reachable ??= (async () => {
    const client = new pg.Client({ connectionString: POSTGRES_URL, connectionTimeoutMillis: 3000 });
    try {
      await client.connect();
      await client.query('SELECT 1');
      return null;
    } catch (error) {
      return `PostgreSQL is not reachable at ${POSTGRES_URL} (${(error as Error).message}); set HOOKGATE_TEST_POSTGRES_URL`;
    } finally {
      await client.end().catch(() => undefined);
    }
  })();
  return reachable;
}

/** Drops a test schema. */
export async function dropSchema(schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  } finally {
    await client.end();
  }
}

export function uniqueSchema(prefix = 'hg_test'): string {
  return `${prefix}_${randomBytes(6).toString('hex')}`;
}

/** A store config in a place of its own (a temp file, or a fresh schema), not opened yet. */
export function createStoreConfig(driver: Driver): { config: StoreConfig; cleanup(): Promise<void> } {
  if (driver === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'hookgate-store-'));
    return {
      config: StoreSchema.parse({ driver: 'sqlite', path: join(dir, 'h.db'), sync: 'normal' }),
      cleanup: async () => rmSync(dir, { recursive: true, force: true }),
    };
  }
  const schema = uniqueSchema();
  return {
    config: StoreSchema.parse({ driver: 'postgres', url: POSTGRES_URL, schema, poolSize: 4 }),
    cleanup: () => dropSchema(schema),
  };
}

/**
 * `leaseClock` replaces the manual clock for leases (tests of workers that run in real time);
 * `heldMarkBatch` bounds the held-mark passes of a claim; `claimScan` how far a SQLite claim reads
 * in order before it looks session by session; `consumeStampBatch` how many events a SQLite batch
 * stamps after a digest turn.
 */
export async function createStoreFixture(
  driver: Driver,
  options: { leaseClock?: Clock; heldMarkBatch?: number; claimScan?: number; consumeStampBatch?: number } = {},
): Promise<StoreFixture> {
  const clock = createManualClock();
  const leaseClock = options.leaseClock ?? clock;
  const { config, cleanup } = createStoreConfig(driver);
  const opened: Store[] = [];
  const open = async (mode: StoreMode = 'serve'): Promise<Store> => {
    const s = await createStore(config, {
      mode,
      clock: leaseClock,
      ...(options.heldMarkBatch === undefined ? {} : { heldMarkBatch: options.heldMarkBatch }),
      ...(options.claimScan === undefined ? {} : { claimScan: options.claimScan }),
      ...(options.consumeStampBatch === undefined ? {} : { consumeStampBatch: options.consumeStampBatch }),
    });
    opened.push(s);
    return s;
  };
  const store = await open('serve');
  return {
    driver,
    config,
    store,
    clock,
    open,
    async dispose() {
      for (const s of opened.reverse()) await s.close().catch(() => undefined);
      await cleanup();
    },
  };
}

/**
 * Runs a suite once per driver. Without a reachable PostgreSQL the PostgreSQL run is skipped,
 * loudly, with the reason: never a silent pass.
 */
export function describeEachDriver(title: string, body: (driver: Driver) => void): void {
  describe(`${title} [sqlite]`, () => body('sqlite'));
  describe(`${title} [postgres]`, async () => {
    const why = await postgresUnavailable();
    if (why !== null) {
      describe('PostgreSQL', { skip: why }, () => undefined);
      process.stderr.write(`SKIPPED: ${title} [postgres]: ${why}\n`);
      return;
    }
    body('postgres');
  });
}
