import type { Claimed, NewLogEvent } from './types.js';

/** An occurrence as read back from the log. */
export interface LogEventRecord extends Omit<NewLogEvent, 'data'> {
  /** The log's order: a consumer's position is the last `seq` it has handled. */
  seq: number;
  /** `data` as the JSON text it was stored as (sent on as it is, never re-encoded). */
  dataJson: string;
}

/** Where the log stands for a reader. */
export interface LogPosition {
  /**
   * The safe head: every occurrence numbered at or below it is committed (and, on SQLite, synced),
   * and none can commit below it later, so a reader may move its position up to it.
   */
  head: number;
  /** Retention has deleted every occurrence numbered at or below this. */
  prunedThrough: number;
}

/** What a read of the log asks for: `after < seq <= through`, oldest first. */
export interface LogQuery {
  after: number;
  through: number;
  name: string;
  /** Only occurrences about this agent. */
  agentId?: string;
  limit: number;
}

export type SubscriptionState = 'activating' | 'active' | 'terminated';

/** A webhook subscription as `events/subscribe` asks for it. */
export interface NewSubscription {
  /** Deterministic over (principal, url, name, arguments): `sub_<hash>`. */
  id: string;
  /** The event name subscribed to. */
  name: string;
  /** The subscription's arguments as canonical JSON. */
  argumentsJson: string;
  url: string;
  /** The subscriber's `whsec_` signing secret. Never logged, never listed. */
  secret: string;
  /** The position delivery starts after (a log `seq`). */
  cursor: number;
  /** When the subscription lapses without a refresh; `null`: never. */
  expiresAt: number | null;
  /** Occurrences older than this when they would be sent are skipped (and a gap sent). */
  maxAgeMs: number | null;
  createdAt: number;
}

export interface SubscriptionRecord extends NewSubscription {
  /** `activating` until the callback echoed its challenge; `terminated` while its notice is sent. */
  state: SubscriptionState;
  /** Why it ended (`expired`, `removed`), once `terminated`. */
  endReason: string | null;
  /** Failed tries at the message now due. */
  attempts: number;
  nextAttemptAt: number;
  /** The last failure's category (`http_5xx`, `timeout`, `connection_refused`, `refused_address`, …). */
  lastError: string | null;
  lastDeliveryAt: number | null;
  /** Occurrences delivered (2xx) since it was created. */
  delivered: number;
  leaseOwner: string | null;
  leaseUntil: number | null;
  updatedAt: number;
}

export type ClaimedSubscription = SubscriptionRecord & Claimed;

/** A subscription as operators see it (CLI, admin API, dashboard): never its secret. */
export type SubscriptionView = Omit<SubscriptionRecord, 'secret' | 'argumentsJson'> & {
  arguments: Record<string, unknown>;
};

/** A sender's progress on a claimed subscription, written under its claim. */
export interface SubscriptionProgress {
  id: string;
  claimId: string;
  /** The new position, when it moved. */
  cursor?: number;
  /** Occurrences delivered since the last progress written. */
  delivered?: number;
  attempts: number;
  nextAttemptAt: number;
  lastError: string | null;
  lastDeliveryAt?: number;
  at: number;
}
