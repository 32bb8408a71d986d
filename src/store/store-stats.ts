import type { RunState } from './types.js';

/** Depths of the work queues and the age of what waits longest in each (operators' first look). */
export interface QueueStats {
  /** Runs in state `queued`. */
  queuedRuns: number;
  /** Runs in state `running` (claimed by a worker). */
  runningRuns: number;
  /** Queued runs a budget holds back (part of `queuedRuns`). */
  heldRuns: number;
  /** System events no heartbeat turn has consumed yet. */
  pendingEvents: number;
  /** Deliveries in state `pending` (first attempt or a retry not yet due). */
  pendingDeliveries: number;
  /** `createdAt` of the oldest queued run, event and pending delivery; `null` when none waits. */
  oldestQueuedRunAt: number | null;
  oldestPendingEventAt: number | null;
  oldestPendingDeliveryAt: number | null;
}

/** How much room the store takes: SQLite's files, or PostgreSQL's tables with their indexes and TOAST. */
export interface StoreSize {
  totalBytes: number;
  /** `database` and `wal` (SQLite), or one entry per table (PostgreSQL). */
  parts: Array<{ name: string; bytes: number }>;
}

/** Every run in the store counted by state (zero for a state with none). */
export type RunCounts = Record<RunState, number>;

export const RUN_STATES: readonly RunState[] = ['queued', 'running', 'succeeded', 'failed', 'timed_out'];

/** One group commit as the store's observer sees it. */
export interface CommitObservation {
  /** Writes in the batch (one when a failed batch is retried write by write). */
  writes: number;
  /** Time from the commit's start until its writers can be answered (its sync included), in seconds. */
  seconds: number;
  ok: boolean;
}

/** Sees the store's group commits (metrics); must not throw. */
export interface StoreObserver {
  onCommit(commit: CommitObservation): void;
}
