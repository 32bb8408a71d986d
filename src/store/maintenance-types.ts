import type { SystemEventRecord } from './types.js';

/** Record types of the store's upkeep: backlog digests and retention. */

/** A bounded view of a backlog too large for one prompt. */
export interface PendingDigest {
  /** Pending events up to and including `throughId`. */
  total: number;
  /** The newest of them: a turn built on this digest consumes every pending event up to it. */
  throughId: string;
  byHook: Array<{ hook: string; count: number }>;
  /** Events alike (same hook, same opening words), largest groups first, each with its newest as the sample. */
  groups: Array<{ sample: SystemEventRecord; count: number }>;
  /** The newest events, newest first. */
  newest: SystemEventRecord[];
}

/** Cut-offs (ms since the epoch) before which finished work is deleted. */
export interface PruneCutoffs {
  events: number;
  runs: number;
  deliveries: number;
  transcript: number;
  requests: number;
  /** Published occurrences (the event log). */
  eventLog: number;
}

/** Rows deleted (or, for a dry run, deletable) per kind. */
export interface PruneCounts {
  events: number;
  runs: number;
  deliveries: number;
  transcript: number;
  requests: number;
  eventLog: number;
  idempotencyKeys: number;
  /** Sessions other than the agents' main sessions, idle past the transcript's window, with no route kept. */
  sessions: number;
}
