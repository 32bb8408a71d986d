import { closeSync, openSync } from 'node:fs';
import Database from 'better-sqlite3';

/** The gateway process holding a database. */
export class StoreLockedError extends Error {
  readonly code = 'store_locked';
  constructor(
    readonly path: string,
    readonly holderPid: number | null,
  ) {
    super(
      `${path} is in use by another hookgate process${holderPid === null ? '' : ` (pid ${holderPid})`}: ` +
        'a SQLite database belongs to one gateway; stop that one, or give this config its own store.path',
    );
    this.name = 'StoreLockedError';
  }
}

/**
 * Creates `path` empty and readable by its owner alone, unless it exists. SQLite creates files
 * 0644 (less the umask), and gives a database's WAL and index the database file's own mode: a
 * file made first is what keeps the payloads, transcripts and replies in them from other users.
 */
export function createPrivateFile(path: string): void {
  try {
    closeSync(openSync(path, 'wx', 0o600));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
}

export interface DatabaseLock {
  release(): void;
}

/**
 * Takes the exclusive lock that makes a SQLite database one gateway's. The lock is a write lock
 * held on a small companion database (`<path>.lock`) for the life of the process: the kernel drops
 * it when the process dies, so a SIGKILLed gateway never blocks its restart, and other processes
 * can still open the main database to read. The holder's pid is committed before the lock is
 * taken for good, so a refused process can name it.
 */
export function lockDatabase(path: string, pid = process.pid): DatabaseLock {
  const lockPath = `${path}.lock`;
  createPrivateFile(lockPath);
  const db = new Database(lockPath);
  try {
    db.pragma('journal_mode = DELETE');
    db.pragma('busy_timeout = 0');
    db.exec(
      'CREATE TABLE IF NOT EXISTS holder (id INTEGER PRIMARY KEY CHECK (id = 1), pid INTEGER NOT NULL, since INTEGER NOT NULL)',
    );
    const take = (): boolean => {
      try {
        db.exec('BEGIN IMMEDIATE');
        return true;
      } catch (error) {
        if ((error as { code?: string }).code?.startsWith('SQLITE_BUSY') === true) return false;
        throw error;
      }
    };
    const refuse = (): never => {
      const row = db.prepare('SELECT pid FROM holder WHERE id = 1').get() as { pid: number } | undefined;
      throw new StoreLockedError(path, row?.pid ?? null);
    };
    if (!take()) refuse();
    try {
      db.prepare(
        'INSERT INTO holder (id, pid, since) VALUES (1, ?, ?) ON CONFLICT (id) DO UPDATE SET pid = excluded.pid, since = excluded.since',
      ).run(pid, Date.now());
      db.exec('COMMIT');
    } catch (error) {
      // A full disk must not keep the gateway from starting to say so (503, /readyz): the lock
      // is taken all the same, and a refused process names the last holder recorded.
      if ((error as { code?: string }).code !== 'SQLITE_FULL') throw error;
      if (db.inTransaction) db.exec('ROLLBACK');
    }
    // Between the commit and this second take another process may win: then it is the holder.
    if (!take()) refuse();
  } catch (error) {
    db.close();
    throw error;
  }
  return {
    release() {
      if (!db.open) return;
      try {
        db.exec('ROLLBACK');
      } finally {
        db.close();
      }
    },
  };
}

/** A CLI command asked for a database no gateway has created yet. */
export class StoreMissingError extends Error {
  readonly code = 'store_missing';
  constructor(readonly path: string) {
    super(`${path} does not exist yet: start the gateway once to create it`);
    this.name = 'StoreMissingError';
  }
}
