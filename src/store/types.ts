import type { ChannelValue, ThinkingLevel, WakeMode } from '../config/index.js';

/** Where an action came from; decides whether its content is wrapped as untrusted. */
export interface ActionSource {
  /** `wake`, `agent`, or the mapping id that produced it. */
  hook: string;
  /** Content came from outside the gateway (every hook); false only for trusted internal events. */
  external: boolean;
  /** Set by a mapping's `allowUnsafeExternalContent: true`. */
  allowUnsafeExternalContent: boolean;
  /** Set by a mapping's `priority: "high"`: a digest lists its events one by one, never in a kind. */
  priority?: 'high';
  /**
   * The event is the gateway's summary of a run from this hook: its first line's `Hook <name>:`
   * is the gateway's own, the rest (the run's reply or error) is external content.
   */
  summary?: true;
  /**
   * A summary whose run's reply went to a chat: its news has reached the user, so a heartbeat turn
   * made only of such summaries delivers no reply of its own (one hook, one chat message).
   */
  delivered?: true;
}

/** A system event to put on an agent's main session (the effect of a wake). */
export interface NewSystemEvent {
  id: string;
  agentId: string;
  /** The main session's key, `agent:<id>:main`. */
  sessionKey: string;
  text: string;
  mode: WakeMode;
  source: ActionSource;
  createdAt: number;
  /** The occurrence this wake publishes, written in its transaction (MCP Events on). */
  published?: NewLogEvent;
}

export interface SystemEventRecord extends NewSystemEvent {
  /** When a heartbeat consumed the event; `null` while pending. */
  consumedAt: number | null;
}

export type RunState = 'queued' | 'running' | 'succeeded' | 'failed' | 'timed_out';

/** An isolated agent run, with every field already resolved by policy. */
export interface NewRun {
  id: string;
  agentId: string;
  sessionKey: string;
  message: string;
  /** Human-readable hook name used in the summary. */
  name: string;
  wakeMode: WakeMode;
  deliver: boolean;
  channel: ChannelValue;
  to: string | null;
  /** Resolved model ref (`provider/model`), or `null` for the agent's default. */
  model: string | null;
  thinking: ThinkingLevel | null;
  timeoutSeconds: number;
  source: ActionSource;
  createdAt: number;
  /**
   * A mapping's `coalesce`: a run with the same key still queued and created within the window
   * takes this run's message instead, so one run sees the whole burst.
   */
  coalesce?: { key: string; windowMs: number };
  /**
   * The occurrence this run's request publishes, written in its transaction (MCP Events on). When
   * the run joins a queued run instead, its `data.runId` becomes that run's id.
   */
  published?: NewLogEvent;
}

export interface RunRecord extends NewRun {
  state: RunState;
  /** How many times a worker claimed the run. */
  attempts: number;
  /** Model that actually answered. */
  modelUsed: string | null;
  /** Process that holds the current claim, while `running`. */
  leaseOwner: string | null;
  /** When the current claim's lease expires, on the database's clock. */
  leaseUntil: number | null;
  startedAt: number | null;
  finishedAt: number | null;
  reply: string | null;
  error: string | null;
  /** Tokens the model reported for the run (input and output), when it reported them. */
  tokens: number | null;
  /** Why a queued run is held back by a budget (`null` when it is not). */
  heldReason: string | null;
}

/** Newest-first listing options. */
export interface ListOptions {
  /** @default 20 */
  limit?: number;
}

/** A finished run's outcome. */
export type RunOutcomeState = Extract<RunState, 'succeeded' | 'failed' | 'timed_out'>;

/** One message in a session's transcript. */
export interface TranscriptEntry {
  sessionKey: string;
  role: 'user' | 'assistant';
  content: string;
  /** The run or heartbeat turn that wrote it. */
  turnId: string;
  createdAt: number;
}

/** A session: an agent's main session or an isolated run session. */
export interface SessionRecord {
  key: string;
  agentId: string;
  /** Channel and recipient of the last conversation with the user (main sessions). */
  lastChannel: string | null;
  lastTo: string | null;
  transcriptEntries: number;
  pendingEvents: number;
  updatedAt: number | null;
}

export type DeliveryState = 'pending' | 'sent' | 'failed' | 'skipped';

/** A reply handed to the delivery port, recorded before anything is sent. */
export interface NewDelivery {
  id: string;
  agentId: string;
  /** `last` is resolved when the delivery is attempted. */
  channel: string;
  to: string | null;
  text: string;
  /** The run that produced the reply; `null` for a heartbeat reply. */
  runId: string | null;
  createdAt: number;
}

export interface DeliveryRecord extends NewDelivery {
  state: DeliveryState;
  attempts: number;
  /** Why it failed or was skipped. */
  error: string | null;
  updatedAt: number;
  /** The concrete route, fixed by the first attempt so retries go to the same place. */
  resolvedChannel: string | null;
  resolvedTo: string | null;
  /** Parts of a split reply already accepted by the service (never sent again). */
  partsSent: number;
  /** When the next attempt is due; `null` for at once. */
  nextAttemptAt: number | null;
  sentAt: number | null;
}

/** One try at sending a delivery. */
export interface DeliveryAttempt {
  deliveryId: string;
  attempt: number;
  at: number;
  /** The service's HTTP status, when it answered. */
  status: number | null;
  error: string | null;
  outcome: 'sent' | 'retry' | 'failed' | 'skipped';
}

export interface DeliveryWithAttempts extends DeliveryRecord {
  attemptLog: DeliveryAttempt[];
}

/** What a dispatcher writes after an attempt, in one transaction. */
export interface DeliveryAttemptResult extends DeliveryAttempt {
  /** The claim the attempt was made under; a stale one writes nothing. */
  claimId: string;
  resolvedChannel: string | null;
  resolvedTo: string | null;
  partsSent: number;
  /** For `retry`: when to try again. */
  nextAttemptAt: number | null;
  /** For `sent` to an explicit route: the main session whose last route it becomes. */
  lastRoute: { sessionKey: string; agentId: string; channel: string; to: string } | null;
}

/** What a worker writes when a run ends, all in one transaction. */
export interface RunCompletion {
  runId: string;
  /** The claim this completion belongs to; a stale claim cannot finish the run. */
  claimId: string;
  state: RunOutcomeState;
  finishedAt: number;
  model: string | null;
  reply: string | null;
  error: string | null;
  /** Tokens the model reported (input and output); counted against `tokensPerDay` budgets. */
  tokens?: number | null;
  /** Appended to the run's session (the prompt and the reply) when it succeeded. */
  transcript: readonly TranscriptEntry[];
  /** The summary posted to the agent's main session. */
  summary: NewSystemEvent;
  delivery: NewDelivery | null;
  /** The run's `run.finished` occurrence (MCP Events on). */
  published?: NewLogEvent;
}

/** What a heartbeat turn writes, all in one transaction. */
export interface HeartbeatTurn {
  /** The agent's heartbeat claim; a stale one writes nothing. */
  claimId: string;
  sessionKey: string;
  agentId: string;
  /** Events the turn's prompt listed; marked consumed. */
  consumedEventIds: readonly string[];
  /**
   * A digest turn: the session's pending events up to and including `eventId` are marked consumed
   * (with `kinds`, only the ordinary events of those kinds: the rest stay pending); there must be
   * exactly `count` pending events up to it, those in `consumedEventIds` included, else the turn is
   * refused.
   */
  consumeThrough?: { eventId: string; count: number; kinds?: readonly DigestKind[] } | null;
  transcript: readonly TranscriptEntry[];
  delivery: NewDelivery | null;
  at: number;
  /** Tokens the provider reported for the turn, counted against the agent's `tokensPerDay` (none: `null` or absent). */
  tokens?: number | null;
}

/** How to claim work: who claims, how much, and for how long (the lease, on the database's clock). */
export interface ClaimOptions {
  /** The claiming process, for operators (`pid:uuid`); fencing uses the claim id. */
  owner: string;
  limit: number;
  leaseMs: number;
}

/** Something held under a claim: only that claim may renew, progress or finish it. */
export interface Claimed {
  id: string;
  /** Fresh for every claim; a worker whose claim was superseded can write nothing. */
  claimId: string;
}

export type ClaimedRun = RunRecord & Claimed;
export type ClaimedDelivery = DeliveryRecord & Claimed;

/** An agent's heartbeat runner lease: one turn at a time per agent across every process. */
export interface HeartbeatClaim {
  agentId: string;
  claimId: string;
}

/** Result of sweeping runs whose lease expired (their process died). */
export interface RecoveryResult {
  /** Runs put back in the queue. */
  requeued: string[];
  /**
   * Runs already claimed `maxAttempts` times, now claimed by the caller so it can finish them
   * (`failed: interrupted`, with their summary) through `completeRun`.
   */
  abandoned: ClaimedRun[];
}

/** Kinds of new work a store announces, to this process and (PostgreSQL) every replica. */
export type WorkSignal =
  | { kind: 'runs' }
  /** A run reached its terminal state, or its delivery did. */
  | { kind: 'finished'; runId: string }
  | { kind: 'deliveries' }
  | { kind: 'heartbeat'; agentId: string }
  | { kind: 'lockout'; client: string; lockedUntil: number }
  /** Occurrences were appended to the event log. */
  | { kind: 'published' }
  /** A subscription became active or was ended (a sender should look at it). */
  | { kind: 'subscriptions' }
  /** A dispatch hold was set or lifted (`hookgate pause`, `resume`, `drain`). */
  | { kind: 'holds' };

/** A sliding-window failure count with a lockout, as the store keeps it for every replica. */
export interface AuthFailure {
  client: string;
  windowMs: number;
  maxFailures: number;
  lockoutMs: number;
}

/** The answer given to a request that carried an idempotency key, kept for the key's window. */
export interface IdempotencyRecord {
  /** The hook the key is scoped to (`wake`, `agent`, or a mapping's name). */
  hook: string;
  key: string;
  /** The HTTP status and JSON body the first request got. */
  status: number;
  body: string;
  createdAt: number;
  /** After this the key is forgotten and may be used again. */
  expiresAt: number;
  /**
   * A digest of the first request's body, for a key the client chose (`Idempotency-Key`): a repeat
   * with another body is refused rather than answered as the first.
   */
  fingerprint?: string;
  /**
   * The body once the store knows which runs joined a queued run (`coalesced`: a run's id to the id
   * of the run it joined), kept instead of `body` when any did: a repeat gets what the first got.
   */
  answerJoined?: (coalesced: Readonly<Record<string, string>>) => string;
}

/** Wakes and runs recorded together, under one idempotency key or none. */
export interface RecordedGroup {
  events: readonly NewSystemEvent[];
  runs: readonly NewRun[];
  /** Occurrences recorded on their own (`action: "event"` mappings). */
  published?: readonly NewLogEvent[];
  idempotency: IdempotencyRecord | null;
}

/**
 * What one accepted request records, in one transaction: its actions and its idempotency key,
 * and for a request fanned out over items (`forEach`), each item's actions under its own key.
 */
export interface RecordedActions extends RecordedGroup {
  items?: readonly RecordedGroup[];
}

export type { DispatchHold, HoldScope, InFlight } from './dispatch-holds.js';

/**
 * One published occurrence, written in the transaction of the action it describes (a wake, a run,
 * an `event` mapping's call, a run's end). The log is the position every consumer keeps its place
 * in: MCP subscribers now, forwarders later.
 */
export interface NewLogEvent {
  /** UUIDv7: the occurrence's `eventId` everywhere it is sent. */
  id: string;
  /** `hook.wake`, `hook.agent`, `hook.<mapping id>`, `run.finished`. */
  name: string;
  agentId: string | null;
  /** The request record this came from (`/admin/api/requests/<id>`), when there is one. */
  requestId: string | null;
  createdAt: number;
  /** The occurrence's `data`, stored as JSON. */
  data: Readonly<Record<string, unknown>>;
  /** Content from outside the gateway that no mapping vouched for (`allowUnsafeExternalContent`). */
  untrusted: boolean;
}

/**
 * A kind of ordinary event: one hook, the same opening words (numbers aside). The store computes
 * `shape` and matches it back when a digest turn consumes the kinds it showed.
 */
export interface DigestKind {
  hook: string | null;
  shape: string;
}
