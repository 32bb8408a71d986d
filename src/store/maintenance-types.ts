import type { DigestKind, SystemEventRecord } from './types.js';

/** Record types of the store's upkeep: backlog digests and retention. */

/** How much one digest shows. */
export interface DigestOptions {
  /** Kinds shown at least (more when there are more hooks, up to `hooks`). */
  groups: number;
  /** Hooks, at most, each shown by a kind of its own whatever `groups` says. */
  hooks: number;
  /** Newest ordinary events shown. */
  newest: number;
  /** Events of `priority: "high"` mappings listed one by one, oldest first. */
  high: number;
}

/**
 * A bounded view of a backlog too large for one prompt. Events of `priority: "high"` mappings are
 * listed one by one; the others are grouped into kinds. A turn built on it consumes the kinds it
 * shows and the events it lists, and nothing else: a kind not shown stays pending.
 */
export interface PendingDigest {
  /** Pending events up to and including `throughId`. */
  total: number;
  /** The newest of them: a turn built on this digest consumes pending events up to it, no further. */
  throughId: string;
  /** Every hook with pending events, with its count (high-priority events included), largest first. */
  byHook: Array<{ hook: string; count: number }>;
  /**
   * Kinds shown, each with its newest event as the sample: first each hook's largest kind (so every
   * hook is shown, up to `hooks` of them), then the largest others; largest first.
   */
  groups: Array<{ sample: SystemEventRecord; count: number; kind: DigestKind }>;
  /** Kinds of ordinary events up to `throughId`, shown or not. */
  kinds: number;
  /** High-priority events, oldest first, at most `high` of them. */
  high: SystemEventRecord[];
  /** High-priority events up to `throughId`, listed or not. */
  highTotal: number;
  /** The newest ordinary events, newest first. */
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

/**
 * Where a mapping's catch-up stands: how far back its provider's record was read and handled, kept
 * from pass to pass and across restarts.
 */
export interface CatchUpRecord {
  /** The mapping's id. */
  mappingId: string;
  /** Everything the provider recorded before this time (ms, the provider's clock) was handled; `null` before the first pass. */
  cursorAt: number | null;
  /** The provider's id of the last event handled (a delivery's GUID, a Stripe event's id). */
  lastId: string | null;
  /**
   * Set by a pass cut short by its `maxEvents`: the id of the last event it handled, which the next
   * pass resumes after (however many events share that moment).
   */
  resumeAfter: string | null;
  /** When a pass last saved it, ms since the epoch. */
  updatedAt: number | null;
}

/** What a pass saves of where it got to. */
export interface CatchUpPosition {
  cursorAt: number;
  lastId: string | null;
  resumeAfter: string | null;
  /** When it is saved. */
  at: number;
}

/** A mapping's catch-up lease: one pass at a time across every process sharing the store. */
export interface CatchUpClaim extends CatchUpRecord {
  claimId: string;
}
