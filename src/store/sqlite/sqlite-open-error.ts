import { statfsSync } from 'node:fs';
import { dirname } from 'node:path';
import { StoreOpenError } from '../store-open-error.js';
import { StoreLockedError, StoreMissingError } from './lock-database.js';

/** Whether the file system holding `path` has no room left (SQLite reports a full disk as an I/O error where it maps its index). */
function diskFull(path: string): boolean {
  try {
    return statfsSync(dirname(path)).bavail === 0;
  } catch {
    return false;
  }
}

/** The cause of a failure to open a SQLite store, as a clause an operator can act on. */
function causeOf(path: string, error: unknown): string {
  const code = String((error as { code?: unknown }).code ?? '');
  if ((code.startsWith('SQLITE_IOERR') || code === 'EIO') && diskFull(path)) return 'the disk is full';
  if (code === 'SQLITE_NOTADB' || code.startsWith('SQLITE_CORRUPT'))
    return 'the file is not a SQLite database, or is corrupt (restore it from a backup, or move it away to start afresh)';
  if (code === 'SQLITE_FULL' || code === 'ENOSPC' || code === 'EDQUOT') return 'the disk is full';
  if (code.startsWith('SQLITE_READONLY') || code === 'EROFS')
    return 'the file or its directory is read-only (a read-only mount, or no write permission)';
  if (code === 'EACCES' || code === 'EPERM' || code === 'SQLITE_PERM' || code === 'SQLITE_AUTH')
    return 'permission denied (the file or its directory belongs to another user)';
  if (code.startsWith('SQLITE_CANTOPEN'))
    return 'it cannot be opened (a directory in its path is missing or not accessible, or it is a directory)';
  if (code.startsWith('SQLITE_IOERR') || code === 'EIO') return 'the disk reported an I/O error';
  if (code === 'ELOOP') return 'its path has a loop of symbolic links';
  if (code === 'ENOTDIR') return 'a part of its path is a file, not a directory';
  const message = error instanceof Error ? error.message : String(error);
  return message.split('\n')[0]!;
}

/**
 * A failure to open a SQLite store as one sentence naming the file and the cause, never a stack:
 * what the operator reads when the gateway or a command cannot start. The store's own refusals
 * (another gateway holds it, it does not exist yet, it is outdated) keep their sentences.
 */
export function toSqliteOpenError(path: string, error: unknown): Error {
  if (error instanceof StoreLockedError || error instanceof StoreMissingError || error instanceof StoreOpenError)
    return error;
  return new StoreOpenError('store_open_failed', `cannot open the SQLite store ${path}: ${causeOf(path, error)}`, {
    cause: error,
  });
}
