import type {
  AuthFailure,
  ClaimedDelivery,
  ClaimedRun,
  ClaimOptions,
  DeliveryAttemptResult,
  DeliveryRecord,
  DeliveryWithAttempts,
  HeartbeatClaim,
  HeartbeatTurn,
  IdempotencyRecord,
  ListOptions,
  NewDelivery,
  NewRun,
  NewSystemEvent,
  RecoveryResult,
  RunCompletion,
  RecordedActions,
  RunRecord,
  RunState,
  SessionRecord,
  SystemEventRecord,
  TranscriptEntry,
  WorkSignal,
} from './types.js';
import type {
  PendingDigest,
  DigestOptions,
  PruneCounts,
  PruneCutoffs,
  CatchUpClaim,
  CatchUpPosition,
  CatchUpRecord,
} from './maintenance-types.js';
import type { DispatchHold, HoldScope, InFlight } from './dispatch-holds.js';
import type { ListRequestsOptions, RequestRecord, RunCancellation } from './request-record.js';
import type {
  ClaimedSubscription,
  LogEventRecord,
  LogPosition,
  LogQuery,
  NewSubscription,
  SubscriptionProgress,
  SubscriptionRecord,
} from './event-log-types.js';
import type { QueueStats, RunCounts, StoreSize } from './store-stats.js';
import type { BudgetReport, RunBudgets } from './run-budgets.js';
import type { RelayQueue } from './relay-queue.js';

/**
 * What the ingress writes. Every write resolves only once it is committed, so the caller may
 * acknowledge the request that caused it.
 */
export interface IngressStore {
  /** Records a system event on an agent's main session. */
  addSystemEvent(event: NewSystemEvent): Promise<void>;
  /** Records an agent run in state `queued`. */
  enqueueRun(run: NewRun): Promise<void>;
  /**
   * Records a request's actions (one or many wakes and runs) and its idempotency key in one
   * transaction. Rejects with `DuplicateRequestError`, writing nothing, when the request's key was
   * recorded before and its window has not passed (judged by the store's clock). An item whose own
   * key was recorded before is skipped (its actions not written); resolves with those items' indexes.
   * A run with `coalesce` joins a queued run of the same key instead of being written; resolves
   * with each such run's id and the id of the run it joined.
   */
  recordActions(actions: RecordedActions): Promise<{ skippedItems: number[]; coalesced: Record<string, string> }>;
  /** The answer recorded with a key whose window has not passed, if any. */
  findIdempotencyKey(hook: string, key: string): Promise<IdempotencyRecord | null>;
}

/** Reads for the CLI, the runtime's prompts and operators. Never blocks a writer. */
export interface StoreReader {
  /** System events, newest first. */
  listSystemEvents(options?: ListOptions): Promise<SystemEventRecord[]>;
  /** Agent runs, newest first, optionally in one state. */
  listRuns(options?: ListOptions & { state?: RunState }): Promise<RunRecord[]>;
  getRun(id: string): Promise<RunRecord | null>;
  /** Pending (unconsumed) events of a session, oldest first. */
  listPendingEvents(sessionKey: string, options?: ListOptions): Promise<SystemEventRecord[]>;
  /** A digest of a session's pending events (`null` when none is pending). */
  digestPending(sessionKey: string, options: DigestOptions): Promise<PendingDigest | null>;
  /** Whether a session holds a pending event that asked for an immediate heartbeat. */
  hasPendingNowEvent(sessionKey: string): Promise<boolean>;
  /** The last `limit` transcript entries of a session, oldest first. */
  readTranscript(sessionKey: string, options?: ListOptions): Promise<TranscriptEntry[]>;
  listSessions(options?: ListOptions): Promise<SessionRecord[]>;
  getSession(key: string): Promise<SessionRecord | null>;
  /** The channel and recipient of the last conversation on a session, if any (a key lookup). */
  getLastRoute(sessionKey: string): Promise<{ channel: string; to: string } | null>;
  /** Deliveries, newest first, each with its attempts. */
  listDeliveries(options?: ListOptions & { state?: DeliveryRecord['state'] }): Promise<DeliveryWithAttempts[]>;
  getDelivery(id: string): Promise<DeliveryWithAttempts | null>;
  /** The delivery a run's reply became, if any. */
  getRunDelivery(runId: string): Promise<DeliveryRecord | null>;
}

/**
 * The run queue. Every claim gets a fresh claim id and a lease on the database's clock; only the
 * current claim may renew, hand back or finish a run, so a stale worker never overwrites a newer one.
 */
export interface RunQueue {
  /**
   * Claims up to `limit` queued runs (state `running`, attempts + 1). Runs sharing a session key
   * are claimed one at a time, oldest first: a run is claimable only when no run of its session is
   * running and none is queued before it. With `budgets`, a run whose agent or hook (mapping) has
   * no room left stays queued, its `heldReason` saying why; claimers across a fleet count usage
   * one at a time, so a budget is never overrun by replicas claiming together.
   */
  claimRuns(options: ClaimOptions & { budgets?: RunBudgets }): Promise<ClaimedRun[]>;
  /** Extends the leases of the given claims; resolves with the run ids whose claim is still current. */
  renewRuns(claims: readonly ClaimedRun[], leaseMs: number): Promise<string[]>;
  /** Hands a run back to the queue (shutdown), without counting the interrupted attempt. */
  releaseRun(claim: ClaimedRun): Promise<boolean>;
  /**
   * Finishes a run: its outcome, its session transcript, the summary on the main session and
   * the delivery request, in one transaction. `false` (and nothing written) when the claim is
   * stale, so no run finishes twice.
   */
  completeRun(completion: RunCompletion): Promise<boolean>;
  /**
   * Requeues running runs whose lease expired (judged by the database's clock). Those already
   * claimed `maxAttempts` times are claimed for `owner` instead and returned, for the caller to
   * finish as `failed: interrupted`.
   */
  recoverExpiredRuns(options: { owner: string; maxAttempts: number; leaseMs: number }): Promise<RecoveryResult>;
}

/** What an operator may do to a run from outside the run loop, under the same claim fencing. */
export interface RunControl {
  /**
   * Fails a run that no worker has claimed (`queued` → `failed`) and posts its summary, in one
   * transaction. `false` (and nothing written) for a run in any other state, or claimed meanwhile.
   */
  cancelRun(cancellation: RunCancellation): Promise<boolean>;
}

/** Every hook request the gateway answered, for operators. */
export interface RequestLog {
  /**
   * Records (or, for the same id, replaces) a request record; resolves once it is committed. On
   * PostgreSQL it is group-committed with the request's action. On SQLite records are gathered and
   * written as one row per batch, at most 100 ms later: a crash can lose the last moment's records,
   * never the actions they describe.
   */
  recordRequest(record: RequestRecord): Promise<void>;
  /** Request records, newest first. */
  listRequests(options?: ListRequestsOptions): Promise<RequestRecord[]>;
  getRequest(id: string): Promise<RequestRecord | null>;
}

/** Heartbeat turns: one runner per agent across every process sharing the store. */
export interface HeartbeatQueue {
  /**
   * Takes the agent's heartbeat lease; `null` while another claim holds it, or when `minIntervalMs`
   * is given and the agent's last recorded turn is more recent than that (so replicas ticking
   * on their own clocks give an agent one periodic turn, not one each).
   */
  claimHeartbeat(options: {
    agentId: string;
    owner: string;
    leaseMs: number;
    minIntervalMs?: number;
  }): Promise<HeartbeatClaim | null>;
  /** Extends the lease; `false` when the claim is no longer current. */
  renewHeartbeat(claim: HeartbeatClaim, leaseMs: number): Promise<boolean>;
  /** Gives the lease up after a turn. */
  releaseHeartbeat(claim: HeartbeatClaim): Promise<void>;
  /**
   * Records a heartbeat turn and marks the events it consumed, in one transaction. `false` (and
   * nothing written) when the claim is stale or any of the events was already consumed.
   */
  recordHeartbeatTurn(turn: HeartbeatTurn): Promise<boolean>;
  /**
   * Ends heartbeat leases that expired without being released (their process died) and returns
   * those agents, whose pending events need a turn.
   */
  recoverExpiredHeartbeats(): Promise<string[]>;
}

/** The delivery queue, with the same claim fencing as runs. */
export interface DeliveryQueue {
  /** Records a delivery request as `pending`. */
  addDelivery(delivery: NewDelivery): Promise<void>;
  /** Claims up to `limit` pending deliveries that are due, oldest first. */
  claimDueDeliveries(options: ClaimOptions & { now: number }): Promise<ClaimedDelivery[]>;
  /** Extends the leases of deliveries being sent; resolves with the ids whose claim is still current. */
  renewDeliveries(claims: readonly ClaimedDelivery[], leaseMs: number): Promise<string[]>;
  /** Records progress (parts sent) without ending the attempt; `false` for a stale claim. */
  recordDeliveryProgress(progress: {
    deliveryId: string;
    claimId: string;
    partsSent: number;
    resolvedChannel: string;
    resolvedTo: string;
    at: number;
  }): Promise<boolean>;
  /** Records an attempt and its consequence (sent, retry later, failed, skipped); `false` for a stale claim. */
  recordDeliveryAttempt(result: DeliveryAttemptResult): Promise<boolean>;
  /** Puts a failed (or skipped) delivery back in the queue with a fresh attempt budget. */
  requeueDelivery(id: string, now: number): Promise<boolean>;
  /** Remembers the channel and recipient of the last conversation on a session. */
  setLastRoute(sessionKey: string, agentId: string, channel: string, to: string, at: number): Promise<void>;
}

/** The auth-failure lockout as every replica sees it. */
export interface LockoutStore {
  /**
   * Counts one failure for a client in a sliding window; resolves with the end of the lockout it
   * is now under (database clock), or `null`.
   */
  recordAuthFailure(failure: AuthFailure): Promise<number | null>;
  /**
   * Clients locked out now, with when their lockout ends: at most `limit`, the lockouts that end
   * last first (every replica reads them every second, so an attack from many addresses must not
   * make that read grow without bound).
   */
  listLockouts(limit: number): Promise<Array<{ client: string; lockedUntil: number }>>;
}

/** Retention: finished work deleted after its window, in small batches. */
export interface RetentionStore {
  /**
   * Deletes at most `limit` rows of each kind older than its cut-off: consumed events, finished
   * runs, ended deliveries (with their attempts), transcript entries, request records, and
   * idempotency keys past their window. Pending and running work is never touched.
   */
  prune(cutoffs: PruneCutoffs, limit: number): Promise<PruneCounts>;
  /** How many rows `prune` would delete, all batches together. */
  countPrunable(cutoffs: PruneCutoffs): Promise<PruneCounts>;
}

/** Announcements of new work, so an idle worker starts at once instead of at its next poll. */
export interface WorkSignals {
  /** Calls `listener` after a commit that made work available (in this process or, shared stores, any). */
  subscribe(listener: (signal: WorkSignal) => void): () => void;
}

/**
 * The event log (DESIGN §6a): every published occurrence in the order its consumers read it. It is
 * appended to in the transactions of the actions it describes (`published` on a wake, a run, a
 * run's end; `RecordedGroup.published`), never on its own.
 */
export interface EventLog {
  /** The safe head and the retention watermark (see `LogPosition`). */
  readLogPosition(): Promise<LogPosition>;
  /** Occurrences of one name after `after` up to `through`, oldest first, at most `limit`. */
  readLogEvents(query: LogQuery): Promise<LogEventRecord[]>;
  /** The last `seq` created before `cutoff` (0 when none): where a `maxAgeMs` floor begins. */
  findLogSeqBefore(cutoff: number, now: number): Promise<number>;
}

/**
 * Webhook subscriptions (MCP Events), durable and shared by a fleet. A sender holds a subscription
 * under a claim with a lease, like a run: only the current claim may move its position, so one
 * replica at a time sends its occurrences, in order.
 */
export interface SubscriptionStore {
  /**
   * Creates a subscription (`activating`), or refreshes the one with this id: its secret, expiry
   * and `maxAgeMs` replaced, its position and state kept. An ended one being notified is replaced
   * by a new one, which no claim holds. Rejects with `TooManySubscriptionsError` when a new one would exceed the limit
   * (ended ones not counted).
   */
  saveSubscription(
    s: NewSubscription,
    options: { maxSubscriptions: number; now: number },
  ): Promise<{ subscription: SubscriptionRecord; created: boolean }>;
  /** `activating` → `active` (its callback answered the challenge); `false` for any other state. */
  activateSubscription(id: string, at: number): Promise<boolean>;
  getSubscription(id: string): Promise<SubscriptionRecord | null>;
  /** Every subscription, oldest first. */
  listSubscriptions(): Promise<SubscriptionRecord[]>;
  /** Deletes a subscription at once, whoever holds it (`events/unsubscribe`, a callback's 410). */
  deleteSubscription(id: string): Promise<boolean>;
  /** Ends a subscription (`expired`, `removed`): its sender sends the `terminated` notice, then deletes it. */
  terminateSubscription(id: string, reason: string, at: number): Promise<boolean>;
  /** Claims up to `limit` active or ending subscriptions nobody holds (or whose lease expired), oldest first. */
  claimSubscriptions(options: ClaimOptions): Promise<ClaimedSubscription[]>;
  /** Extends leases; resolves with the ids whose claim is still current. */
  renewSubscriptions(claims: readonly ClaimedSubscription[], leaseMs: number): Promise<string[]>;
  /** Gives a claim up (shutdown). */
  releaseSubscription(claim: ClaimedSubscription): Promise<boolean>;
  /** Writes a sender's progress under its claim; `false` (nothing written) for a stale claim. */
  recordSubscriptionProgress(progress: SubscriptionProgress): Promise<boolean>;
  /** Deletes an ended subscription once its notice is settled, under its claim. */
  finishSubscription(claim: Pick<ClaimedSubscription, 'id' | 'claimId'>): Promise<boolean>;
}

/**
 * Dispatch holds as every replica's claims read them: a hold set here is honoured by the next claim
 * of any process sharing the store, and lasts until it is lifted (restarts included).
 */
export interface DispatchControl {
  /** Every hold set now. */
  listHolds(): Promise<DispatchHold[]>;
  /** Sets a hold, replacing one of the same scope and key (its kind, note and time). */
  setHold(hold: DispatchHold): Promise<void>;
  /** Lifts a hold; `false` when none of that scope and key was set. */
  releaseHold(scope: HoldScope, key: string): Promise<boolean>;
  /** Work claimed under a live lease now (judged by the database's clock), in every process: what a drain waits for. */
  readInFlight(): Promise<InFlight>;
}

/**
 * Each catch-up mapping's position in its provider's record, and the lease that lets one process at
 * a time read and handle it (judged by the database's clock, fenced by the claim id).
 */
export interface CatchUpState {
  /** Takes the mapping's catch-up lease, with its position; `null` while another claim holds it. */
  claimCatchUp(options: { mappingId: string; owner: string; leaseMs: number }): Promise<CatchUpClaim | null>;
  /** Extends the lease; `false` when the claim is no longer current. */
  renewCatchUp(claim: CatchUpClaim, leaseMs: number): Promise<boolean>;
  /** Saves the position under the claim; `false` (nothing written) for a stale claim. */
  saveCatchUp(claim: CatchUpClaim, position: CatchUpPosition): Promise<boolean>;
  /** Gives the lease up. */
  releaseCatchUp(claim: CatchUpClaim): Promise<void>;
  /** Every mapping's position, by mapping id. */
  listCatchUps(): Promise<CatchUpRecord[]>;
}

/** What operators watch: queue depths, counts, size, and whether the store can write now. */
export interface StoreStats {
  /** Queue depths and oldest waiting items; cheap (indexed), for metrics scrapes. */
  readQueueStats(): Promise<QueueStats>;
  /** Every run counted by state; scans the runs, so for the CLI rather than every scrape. */
  countRuns(): Promise<RunCounts>;
  readStoreSize(): Promise<StoreSize>;
  /**
   * What each key of `budgets` used now: runs started in the last hour, tokens of the last 24 h
   * (an agent's heartbeat turns included), runs running (for keys with `maxConcurrentRuns`).
   */
  readBudgetUsage(budgets: RunBudgets): Promise<BudgetReport>;
  /** Makes one small durable write (a readiness probe); rejects with the driver's error when the store cannot write. */
  probeWrite(): Promise<void>;
}

/**
 * Durable state of the gateway, as the roles its consumers use. Implementations: SQLite (one
 * process per database, enforced by a lock) and PostgreSQL (a fleet sharing one state).
 */
export interface Store
  extends IngressStore,
    StoreReader,
    RunQueue,
    RunControl,
    RequestLog,
    HeartbeatQueue,
    DeliveryQueue,
    LockoutStore,
    RetentionStore,
    WorkSignals,
    StoreStats,
    EventLog,
    SubscriptionStore,
    DispatchControl,
    CatchUpState,
    RelayQueue {
  /** Whether several processes share this store (auth lockouts are then kept in it). */
  readonly shared: boolean;
  /** Flushes pending writes and releases the database (and its lock). */
  close(): Promise<void>;
}
