import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { isStoreUnavailable } from './is-store-unavailable.js';

/** What `fn` throws; fails the test when it does not throw. */
async function thrownBy(fn: () => unknown): Promise<unknown> {
  try {
    await fn();
  } catch (error) {
    return error;
  }
  assert.fail('expected a throw');
}

/** A PostgreSQL error as `pg` builds it from an ErrorResponse message. */
function pgError(code: string, message: string): Error {
  const e = new pg.DatabaseError(message, message.length, 'error');
  e.code = code;
  e.severity = 'FATAL';
  return e;
}

describe('isStoreUnavailable: SQLite errors, produced by SQLite itself', () => {
  let dir: string;
  let path: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'hookgate-unavailable-'));
    path = join(dir, 'db.sqlite');
    const db = new Database(path);
    db.pragma('journal_mode = WAL');
    db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL UNIQUE)');
    db.close();
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('is true for SQLITE_BUSY: another connection holds the write lock', async () => {
    const holder = new Database(path);
    const writer = new Database(path, { timeout: 0 });
    try {
      holder.exec('BEGIN IMMEDIATE');
      const error = await thrownBy(() => writer.prepare('INSERT INTO t (v) VALUES (?)').run('busy'));
      assert.equal((error as { code?: string }).code, 'SQLITE_BUSY');
      assert.equal(isStoreUnavailable(error), true);
    } finally {
      holder.exec('ROLLBACK');
      holder.close();
      writer.close();
    }
  });

  it('is true for SQLITE_READONLY', async () => {
    const db = new Database(path, { readonly: true });
    try {
      const error = await thrownBy(() => db.prepare('INSERT INTO t (v) VALUES (?)').run('ro'));
      assert.match(String((error as { code?: string }).code), /^SQLITE_READONLY/);
      assert.equal(isStoreUnavailable(error), true);
    } finally {
      db.close();
    }
  });

  it('is false for a constraint violation: the write itself is wrong', async () => {
    const db = new Database(path);
    try {
      db.prepare('INSERT INTO t (v) VALUES (?)').run('dup');
      const error = await thrownBy(() => db.prepare('INSERT INTO t (v) VALUES (?)').run('dup'));
      assert.match(String((error as { code?: string }).code), /^SQLITE_CONSTRAINT/);
      assert.equal(isStoreUnavailable(error), false);
    } finally {
      db.close();
    }
  });

  const codes: Array<[string, boolean]> = [
    ['SQLITE_FULL', true],
    ['SQLITE_IOERR', true],
    ['SQLITE_IOERR_FSYNC', true],
    ['SQLITE_BUSY_SNAPSHOT', true],
    ['SQLITE_READONLY_DBMOVED', true],
    ['SQLITE_CORRUPT', false],
    ['SQLITE_ERROR', false],
    ['SQLITE_BUSYX', false],
  ];
  for (const [code, want] of codes) {
    it(`is ${want} for ${code}`, () => assert.equal(isStoreUnavailable(new Database.SqliteError('x', code)), want));
  }
});

describe('isStoreUnavailable: PostgreSQL errors', () => {
  it('is true for a refused connection, as pg reports it', async () => {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    const client = new pg.Client({
      host: '127.0.0.1',
      port,
      user: 'hookgate',
      database: 'hookgate',
      connectionTimeoutMillis: 5000,
    });
    const error = await thrownBy(() => client.connect());
    assert.equal(isStoreUnavailable(error), true, String(error));
  });

  const states: Array<[string, string, boolean]> = [
    ['57P01', 'terminating connection due to administrator command', true],
    ['57P03', 'the database system is starting up', true],
    ['53100', 'could not extend file "base/16384/16385": No space left on device', true],
    ['53300', 'sorry, too many clients already', true],
    ['55P03', 'canceling statement due to lock timeout', true],
    ['08006', 'connection failure', true],
    ['08P01', 'protocol violation', true],
    ['23505', 'duplicate key value violates unique constraint "runs_pkey"', false],
    ['42P01', 'relation "runs" does not exist', false],
  ];
  for (const [code, message, want] of states) {
    it(`is ${want} for SQLSTATE ${code} (${message})`, () =>
      assert.equal(isStoreUnavailable(pgError(code, message)), want));
  }

  it('is true for a connection lost mid-query, which pg reports without a code', () => {
    assert.equal(isStoreUnavailable(new Error('Connection terminated unexpectedly')), true);
  });

  it('is true for a statement the server did not answer within query_timeout', () => {
    assert.equal(isStoreUnavailable(new Error('Query read timeout')), true);
  });

  it('looks through a cause chain', () => {
    assert.equal(
      isStoreUnavailable(new Error('enqueue failed', { cause: pgError('57P01', 'terminating connection') })),
      true,
    );
  });

  it('is false for anything else', () => {
    assert.equal(isStoreUnavailable(new TypeError('Cannot read properties of undefined')), false);
    assert.equal(isStoreUnavailable(null), false);
    assert.equal(isStoreUnavailable('SQLITE_BUSY'), false);
  });
});
