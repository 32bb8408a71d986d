import type {
  ClaimOptions, DeliveryAttemptResult, DeliveryRecord, DeliveryWithAttempts, HeartbeatTurn, ListOptions, NewDelivery, NewRun, NewSystemEvent, RecoveryResult,
  RunCompletion, RunRecord, SessionRecord, SystemEventRecord, TranscriptEntry,
} from './types.js';

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
  getRun(id: string): Promise<RunRecord | null>;

  /**
   * Claims up to `limit` queued runs for `owner` (state `running`, attempts + 1, lease until
   * `now + leaseMs`). Runs sharing a session key are claimed one at a time, oldest first: a run is
   * claimable only when no run of its session is running and none is queued before it.
   */
  claimRuns(options: ClaimOptions): Promise<RunRecord[]>;
  /** Hands runs back to the queue at shutdown, without counting the interrupted attempt. */
  releaseRuns(owner: string, runIds: readonly string[]): Promise<void>;
  /** Extends the lease of runs `owner` still holds. */
  renewLeases(owner: string, runIds: readonly string[], leaseUntil: number): Promise<void>;
  /**
   * Finishes a run: its outcome, its session transcript, the summary on the main session and
   * the delivery request, in one transaction. `false` (and nothing written) when the claim is
   * stale, so no run finishes twice.
   */
  completeRun(completion: RunCompletion): Promise<boolean>;
  /**
   * Requeues running runs whose lease expired; those already claimed `maxAttempts` times fail
   * with reason `interrupted` and get their summary (built by `summarize`) in the same transaction.
   */
  recoverExpiredRuns(now: number, maxAttempts: number, summarize: (run: RunRecord) => NewSystemEvent): Promise<RecoveryResult>;

  /** Pending (unconsumed) events of a session, oldest first. */
  listPendingEvents(sessionKey: string, options?: ListOptions): Promise<SystemEventRecord[]>;
  /** Whether a session holds a pending event that asked for an immediate heartbeat. */
  hasPendingNowEvent(sessionKey: string): Promise<boolean>;
  /** Records a heartbeat turn and marks the events it consumed, in one transaction. */
  recordHeartbeatTurn(turn: HeartbeatTurn): Promise<void>;
  /** The last `limit` transcript entries of a session, oldest first. */
  readTranscript(sessionKey: string, options?: ListOptions): Promise<TranscriptEntry[]>;
  listSessions(options?: ListOptions): Promise<SessionRecord[]>;
  getSession(key: string): Promise<SessionRecord | null>;
  /** The channel and recipient of the last conversation on a session, if any (a key lookup). */
  getLastRoute(sessionKey: string): Promise<{ channel: string; to: string } | null>;
  /** Remembers the channel and recipient of the last conversation on a session. */
  setLastRoute(sessionKey: string, agentId: string, channel: string, to: string, at: number): Promise<void>;

  /** Records a delivery request as `pending`. */
  addDelivery(delivery: NewDelivery): Promise<void>;
  /** Deliveries, newest first, each with its attempts. */
  listDeliveries(options?: ListOptions & { state?: DeliveryRecord['state'] }): Promise<DeliveryWithAttempts[]>;
  getDelivery(id: string): Promise<DeliveryWithAttempts | null>;
  /**
   * Leases up to `limit` pending deliveries that are due (oldest first) for `owner`; a lease
   * keeps another dispatcher off them until `now + leaseMs`.
   */
  claimDueDeliveries(options: { owner: string; now: number; limit: number; leaseMs: number }): Promise<DeliveryRecord[]>;
  /** Records progress (parts sent) without ending the attempt. */
  recordDeliveryProgress(id: string, owner: string, partsSent: number, resolvedChannel: string, resolvedTo: string, at: number): Promise<void>;
  /** Records an attempt and its consequence (sent, retry later, failed, skipped); `false` for a stale lease. */
  recordDeliveryAttempt(result: DeliveryAttemptResult): Promise<boolean>;
  /** Puts a failed (or skipped) delivery back in the queue with a fresh attempt budget. */
  requeueDelivery(id: string, now: number): Promise<boolean>;
  /** Drops every delivery lease (at startup, when no other process can hold one). */
  releaseDeliveryLeases(): Promise<void>;

  /** Flushes pending writes and releases the database. */
  close(): Promise<void>;
}
