import type { ListOptions, NewRun, NewSystemEvent, RunRecord, SystemEventRecord } from './types.js';

/**
 * Durable state of the gateway. Every write resolves only once it is committed, so the caller
 * may acknowledge the request that caused it. Implementations: SQLite (one machine), PostgreSQL
 * (a fleet sharing one state).
 */
export interface Store {
  /** Records a system event on an agent's main session. */
  addSystemEvent(event: NewSystemEvent): Promise<void>;
  /** Records an agent run in state `queued`. */
  enqueueRun(run: NewRun): Promise<void>;
  /** System events, newest first. */
  listSystemEvents(options?: ListOptions): Promise<SystemEventRecord[]>;
  /** Agent runs, newest first. */
  listRuns(options?: ListOptions): Promise<RunRecord[]>;
  /** Flushes pending writes and releases the database. */
  close(): Promise<void>;
}
