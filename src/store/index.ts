/** Durable state: the `Store` interface, its record types, and the SQLite implementation. */
export type { Store } from './store.js';
export type * from './types.js';
export { createSqliteStore } from './sqlite/create-sqlite-store.js';
export type { SqliteStoreOptions } from './sqlite/create-sqlite-store.js';
export { isStoreUnavailable } from './is-store-unavailable.js';
