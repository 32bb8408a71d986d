import type Database from 'better-sqlite3';
import type { WorkSignal } from '../types.js';
import type { Statements } from './prepare-statements.js';

/** What the SQLite store's parts share. */
export interface SqliteContext {
  db: Database.Database;
  st: Statements;
  /** Runs `fn` in the group commit; resolves after the commit. */
  write<T>(fn: () => T): Promise<T>;
  /** The lease clock: this process's, since a SQLite database belongs to one process. */
  now(): number;
  /** Announces work after a commit. */
  emit(signal: WorkSignal): void;
  newClaimId(): string;
}

/** Thrown inside a write to roll it back and report a stale claim as `false`. */
export class StaleClaim extends Error {}
