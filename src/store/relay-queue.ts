/**
 * The relay queue: hook requests a relay accepted, held as received (the body's bytes, the headers a
 * home needs to verify them again) until a home gateway leases and acknowledges them.
 */

/** How the relay authenticated a request: the hook token, or a mapping's signature (which the home checks again). */
export type RelayAuth = 'token' | 'signature';

/** `pending` until the home acknowledges it (`done`) or refuses it, or it outlived `maxLeases` (`dead`). */
export type RelayState = 'pending' | 'done' | 'dead';

export interface NewRelayRequest {
  id: string;
  /** The hook name (the path after `hooks.path`). */
  hook: string;
  /** Path and query as received. */
  url: string;
  /** The headers kept for the home, lower-case names (never a credential). */
  headers: Readonly<Record<string, string>>;
  body: Buffer;
  auth: RelayAuth;
  /** The request's idempotency key (its own, or its sender's delivery id), if any. */
  key: string | null;
  /** Until when a repeat with the same key is answered as this request (`null` without a key). */
  keyExpiresAt: number | null;
  /** A digest of the payload a client's own `Idempotency-Key` came with (`idempotencyFingerprint`). */
  fingerprint: string | null;
  receivedAt: number;
}

/** A request as a lease hands it out. */
export interface LeasedRelayRequest {
  id: string;
  hook: string;
  url: string;
  headers: Record<string, string>;
  body: Buffer;
  auth: RelayAuth;
  receivedAt: number;
  /** Leases this request has had, this one included. */
  attempts: number;
}

/** What a home answered for a request it could not take: the status and code its door refused it with. */
export interface RelayRefusal {
  id: string;
  status: number;
  code: string;
  reason: string;
}

/** A relayed request as operators see it (no body, no headers). */
export interface RelayRequestRecord {
  id: string;
  hook: string;
  auth: RelayAuth;
  state: RelayState;
  receivedAt: number;
  attempts: number;
  /** While leased: when the lease ends. */
  leaseUntil: number | null;
  endedAt: number | null;
  /** A dead letter's status (the home's refusal; null when it was never acknowledged). */
  status: number | null;
  code: string | null;
  reason: string | null;
  bytes: number;
}

/** The backlog: requests waiting for the home (those leased now among them), and dead letters. */
export interface RelayBacklog {
  pending: number;
  leased: number;
  dead: number;
  /** When the oldest pending request arrived; `null` when none waits. */
  oldestPendingAt: number | null;
}

/** Cut-offs of the relay's retention: each row kind older than its own is deleted. */
export interface RelayPruneCutoffs {
  /** Pending requests and dead letters received before this are dropped. */
  receivedBefore: number;
  /** Acknowledged requests are deleted once their key's window ended before this (at once without a key). */
  now: number;
}

export interface RelayPruneCounts {
  /** Pending requests dropped unacknowledged: the home never took them within the retention. */
  expired: number;
  /** Dead letters dropped. */
  dead: number;
  /** Acknowledged requests whose key window ended. */
  done: number;
}

export interface RelayQueue {
  /**
   * Records a request (`pending`) in one commit. A request whose key was recorded before, within its
   * window, is not recorded: resolves with the first one's id, `duplicate: true` and the first one's
   * fingerprint.
   */
  addRelayRequest(
    request: NewRelayRequest,
  ): Promise<{ id: string; duplicate: false } | { id: string; duplicate: true; fingerprint: string | null }>;
  /**
   * Leases the oldest pending requests nobody holds (or whose lease expired, judged by the store's
   * clock): at most `limit`, and at most `maxBytes` of bodies (always one, however large). A request
   * already leased `maxLeases` times is dead-lettered instead, with the reason.
   */
  leaseRelayRequests(options: {
    leaseId: string;
    limit: number;
    maxBytes: number;
    leaseMs: number;
    maxLeases: number;
  }): Promise<LeasedRelayRequest[]>;
  /**
   * Acknowledges pending requests: `done` (the home committed them; their body and headers are
   * dropped, their key kept for its window) or refused (dead letters with the home's reason).
   * Whichever lease holds them: the home's commit is what counts. Resolves with the rows changed.
   */
  ackRelayRequests(ack: { done: readonly string[]; refused: readonly RelayRefusal[]; at: number }): Promise<{
    done: number;
    refused: number;
  }>;
  readRelayBacklog(): Promise<RelayBacklog>;
  /** Relayed requests, newest first, optionally in one state. */
  listRelayRequests(options: { state?: RelayState; limit: number }): Promise<RelayRequestRecord[]>;
  /** A dead letter back to `pending`, with a fresh lease budget; `false` for any other state. */
  requeueRelayRequest(id: string): Promise<boolean>;
  /** Deletes at most `limit` rows of each kind past its cut-off. */
  pruneRelay(cutoffs: RelayPruneCutoffs, limit: number): Promise<RelayPruneCounts>;
}

/** The dead-letter reason of a request leased `maxLeases` times without an acknowledgement. */
export function unacknowledgedReason(leases: number): string {
  return `leased ${leases} times without an acknowledgement (the home failed on it each time; see its log)`;
}
