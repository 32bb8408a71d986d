import type { Clock } from '../common/clock.js';
import type { StoreConfig } from '../config/index.js';
import { createSqliteStore } from './sqlite/create-sqlite-store.js';
import type { Store } from './store.js';
import type { StoreObserver } from './store-stats.js';
import { overlayHeld, type DispatchHold } from './dispatch-holds.js';

/**
 * How a process uses the store:
 * - `serve`: the gateway. SQLite takes the database's exclusive lock (a second gateway is
 *   refused) and migrates; PostgreSQL migrates under an advisory lock and listens for work.
 * - `read`: CLI listings beside a running gateway; no lock, no migration, no writes.
 * - `write`: CLI commands that change one row (`retry`) beside a running gateway; no lock, no migration.
 */
export type StoreMode = 'serve' | 'read' | 'write';

interface CreateStoreOptions {
  mode: StoreMode;
  /**
   * Replaces the database's clock for leases (tests only). Production leases are judged by the
   * database's clock, so replicas with skewed clocks agree.
   */
  clock?: Clock;
  /** Sees the store's group commits (metrics). */
  observer?: StoreObserver;
  /** Runs a claim's held-mark passes go through in all (tests). @default MARK_BATCH (held-keys.ts) */
  heldMarkBatch?: number;
  /** Ready runs a claim reads in order (SQLite), or past which it looks session by session (PostgreSQL) (tests). @default 1000 */
  claimScan?: number;
  /** Events a batch stamps after a digest turn consumed them by a mark (tests; SQLite). @default 1000 */
  consumeStampBatch?: number;
}

/** Opens the store a config names. No caller checks the driver: every difference lives here. */
export async function createStore(config: StoreConfig, options: CreateStoreOptions): Promise<Store> {
  return showHolds(await openDriver(config, options));
}

/**
 * Runs as every reader should see them: a queued run a dispatch hold covers says so in its
 * `heldReason` from the moment the hold is set (claims mark such runs only as they pass them).
 */
function showHolds(store: Store): Store {
  const withHolds = async <T>(read: Promise<T>, show: (value: T, holds: DispatchHold[]) => T): Promise<T> => {
    const [value, holds] = await Promise.all([read, store.listHolds()]);
    return show(value, holds);
  };
  return {
    ...store,
    getRun: (id) => withHolds(store.getRun(id), (run, holds) => (run === null ? null : overlayHeld(run, holds))),
    listRuns: (o) => withHolds(store.listRuns(o), (runs, holds) => runs.map((r) => overlayHeld(r, holds))),
  };
}

async function openDriver(config: StoreConfig, options: CreateStoreOptions): Promise<Store> {
  const common = {
    mode: options.mode,
    ...(options.clock ? { clock: options.clock } : {}),
    ...(options.observer ? { observer: options.observer } : {}),
    ...(options.heldMarkBatch ? { heldMarkBatch: options.heldMarkBatch } : {}),
    ...(options.claimScan ? { claimScan: options.claimScan } : {}),
  };
  const sqliteOnly = {
    ...(options.consumeStampBatch ? { consumeStampBatch: options.consumeStampBatch } : {}),
  };
  switch (config.driver) {
    case 'sqlite':
      return createSqliteStore({ path: config.path, sync: config.sync, ...common, ...sqliteOnly });
    case 'postgres': {
      // Loaded only for PostgreSQL: the driver and its store cost a SQLite gateway memory for nothing.
      const { createPostgresStore } = await import('./postgres/create-postgres-store.js');
      return createPostgresStore({ url: config.url, schema: config.schema, poolSize: config.poolSize, ...common });
    }
  }
}
