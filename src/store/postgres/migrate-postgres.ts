import type pg from 'pg';
import { PG_MIGRATIONS } from './migrations.js';

/**
 * Brings the schema up to date. Replicas starting together serialise on an advisory lock keyed
 * by the schema's name, so the migrations run once; the others find them done.
 */
export async function migratePostgres(client: pg.ClientBase, schema: string): Promise<void> {
  await client.query('BEGIN');
  try {
    // Another replica may be migrating: wait for it however long it takes (the pool's connections
    // give up on locks after a short while otherwise).
    await client.query('SET LOCAL lock_timeout = 0');
    await client.query("SELECT pg_advisory_xact_lock(hashtext('hookgate:' || $1))", [schema]);
    await client.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
    await client.query(`CREATE TABLE IF NOT EXISTS "${schema}".hookgate_schema (version integer NOT NULL)`);
    const { rows } = await client.query(`SELECT version FROM "${schema}".hookgate_schema`);
    let version = (rows[0] as { version: number } | undefined)?.version ?? 0;
    if (rows.length === 0) await client.query(`INSERT INTO "${schema}".hookgate_schema (version) VALUES (0)`);
    for (; version < PG_MIGRATIONS.length; version++) await client.query(PG_MIGRATIONS[version]!);
    await client.query(`UPDATE "${schema}".hookgate_schema SET version = $1`, [version]);
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}

/** The schema's version, or `null` when it has none (never migrated). */
export async function readSchemaVersion(client: pg.ClientBase, schema: string): Promise<number | null> {
  const { rows } = await client.query('SELECT to_regclass($1) AS t', [`"${schema}".hookgate_schema`]);
  if ((rows[0] as { t: string | null }).t === null) return null;
  const v = await client.query(`SELECT version FROM "${schema}".hookgate_schema`);
  return (v.rows[0] as { version: number } | undefined)?.version ?? null;
}
