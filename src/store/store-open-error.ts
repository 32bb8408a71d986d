import { HookgateError } from '../common/errors.js';

/**
 * The gateway or a CLI command could not open its store; the operator must react (start the
 * database, fix the URL or its rights, free the disk, restore a corrupt file, migrate by starting
 * the gateway). One sentence: a PostgreSQL store's names the host, port, database and schema, never
 * the password; a SQLite store's names the file and the cause.
 * - `store_open_failed`: the database could not be reached, or refused a step of opening it.
 * - `store_outdated`: the schema was migrated by another version of hookgate than this one.
 */
export class StoreOpenError extends HookgateError {
  declare readonly code: 'store_open_failed' | 'store_outdated';
  constructor(code: 'store_open_failed' | 'store_outdated', message: string, options?: { cause?: unknown }) {
    super(code, message, options);
    this.name = 'StoreOpenError';
  }
}
