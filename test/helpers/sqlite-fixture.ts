import Database from 'better-sqlite3';
import { createStoreFixture, type StoreFixture } from './store-fixture.js';

/** A SQLite store fixture with a read-only connection of the test's own to look at its rows. */
export interface SqliteFixture extends StoreFixture {
  path: string;
  raw: Database.Database;
}

export async function createSqliteFixture(
  options: Parameters<typeof createStoreFixture>[1] = {},
): Promise<SqliteFixture> {
  const f = await createStoreFixture('sqlite', options);
  const path = (f.config as { path: string }).path;
  const raw = new Database(path, { readonly: true });
  return {
    ...f,
    path,
    raw,
    async dispose() {
      raw.close();
      await f.dispose();
    },
  };
}
