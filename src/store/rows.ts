/** Row shapes as the databases return them (same columns in SQLite and PostgreSQL), and their mapping to records. */
import type {
  IdempotencyRecord,
  DeliveryAttempt,
  DeliveryRecord,
  RunRecord,
  RunState,
  SessionRecord,
  SystemEventRecord,
  TranscriptEntry,
} from './types.js';
import type { CatchUpRecord } from './maintenance-types.js';
import type { RequestRecord } from './request-record.js';
import { RUN_STATES, type QueueStats, type RunCounts } from './store-stats.js';
import { decodeSource } from './action-source.js';

/** How many records a listing returns when it is given no `limit`. */
export const DEFAULT_LIMIT = 20;

export interface EventRow {
  id: string;
  agent_id: string;
  session_key: string;
  text: string;
  mode: string;
  source: string;
  created_at: number;
  consumed_at: number | null;
}
export interface RunRow {
  id: string;
  state: string;
  agent_id: string;
  session_key: string;
  message: string;
  name: string;
  wake_mode: string;
  deliver: number;
  channel: string;
  recipient: string | null;
  model: string | null;
  thinking: string | null;
  timeout_seconds: number;
  source: string;
  created_at: number;
  attempts: number;
  started_at: number | null;
  finished_at: number | null;
  reply: string | null;
  error: string | null;
  model_used: string | null;
  lease_owner: string | null;
  lease_until: number | null;
  claim_id: string | null;
  hook: string | null;
  tokens: number | string | null;
  held_reason: string | null;
}
export interface SessionRow {
  key: string;
  agent_id: string | null;
  last_channel: string | null;
  last_to: string | null;
  updated_at: number | null;
  entries: number;
  pending: number;
}
export interface TranscriptRow {
  session_key: string;
  role: string;
  content: string;
  turn_id: string;
  created_at: number;
}
export interface DeliveryRow {
  id: string;
  state: string;
  agent_id: string;
  channel: string;
  recipient: string | null;
  text: string;
  run_id: string | null;
  attempts: number;
  error: string | null;
  created_at: number;
  updated_at: number;
  resolved_channel: string | null;
  resolved_to: string | null;
  parts_sent: number;
  next_attempt_at: number | null;
  sent_at: number | null;
  lease_until: number | null;
  claim_id: string | null;
}
export interface AttemptRow {
  delivery_id: string;
  attempt: number;
  at: number;
  status: number | null;
  error: string | null;
  outcome: string;
}

export const toEvent = (r: EventRow): SystemEventRecord => ({
  id: r.id,
  agentId: r.agent_id,
  sessionKey: r.session_key,
  text: r.text,
  mode: r.mode as SystemEventRecord['mode'],
  source: decodeSource(r.source),
  createdAt: r.created_at,
  consumedAt: r.consumed_at,
});

export const toRun = (r: RunRow): RunRecord => ({
  id: r.id,
  state: r.state as RunState,
  agentId: r.agent_id,
  sessionKey: r.session_key,
  message: r.message,
  name: r.name,
  wakeMode: r.wake_mode as RunRecord['wakeMode'],
  deliver: r.deliver === 1,
  channel: r.channel as RunRecord['channel'],
  to: r.recipient,
  model: r.model,
  thinking: r.thinking as RunRecord['thinking'],
  timeoutSeconds: r.timeout_seconds,
  source: decodeSource(r.source),
  createdAt: r.created_at,
  attempts: r.attempts,
  startedAt: r.started_at,
  finishedAt: r.finished_at,
  reply: r.reply,
  error: r.error,
  modelUsed: r.model_used,
  leaseOwner: r.lease_owner,
  leaseUntil: r.lease_until,
  // PostgreSQL returns bigint as a string.
  tokens: r.tokens === null || r.tokens === undefined ? null : Number(r.tokens),
  heldReason: r.held_reason ?? null,
});

export const toSession = (r: SessionRow): SessionRecord => ({
  key: r.key,
  agentId: r.agent_id ?? '',
  lastChannel: r.last_channel,
  lastTo: r.last_to,
  transcriptEntries: r.entries,
  pendingEvents: r.pending,
  updatedAt: r.updated_at,
});

export const toTranscript = (r: TranscriptRow): TranscriptEntry => ({
  sessionKey: r.session_key,
  role: r.role as TranscriptEntry['role'],
  content: r.content,
  turnId: r.turn_id,
  createdAt: r.created_at,
});

export const toDelivery = (r: DeliveryRow): DeliveryRecord => ({
  id: r.id,
  state: r.state as DeliveryRecord['state'],
  agentId: r.agent_id,
  channel: r.channel,
  to: r.recipient,
  text: r.text,
  runId: r.run_id,
  attempts: r.attempts,
  error: r.error,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
  resolvedChannel: r.resolved_channel,
  resolvedTo: r.resolved_to,
  partsSent: r.parts_sent,
  nextAttemptAt: r.next_attempt_at,
  sentAt: r.sent_at,
});

export const toAttempt = (r: AttemptRow): DeliveryAttempt => ({
  deliveryId: r.delivery_id,
  attempt: r.attempt,
  at: r.at,
  status: r.status,
  error: r.error,
  outcome: r.outcome as DeliveryAttempt['outcome'],
});

export interface IdempotencyRow {
  hook: string;
  key: string;
  status: number;
  body: string;
  created_at: number;
  expires_at: number;
  fingerprint?: string | null;
}

export const toIdempotency = (r: IdempotencyRow): IdempotencyRecord => ({
  hook: r.hook,
  key: r.key,
  status: r.status,
  body: r.body,
  createdAt: r.created_at,
  expiresAt: r.expires_at,
  ...(r.fingerprint == null ? {} : { fingerprint: r.fingerprint }),
});

/** Queue depths as both drivers' stats query returns them. */
export interface QueueRow {
  queued_runs: number;
  running_runs: number;
  held_runs: number;
  pending_events: number;
  pending_deliveries: number;
  oldest_run: number | null;
  oldest_event: number | null;
  oldest_delivery: number | null;
}

export const toQueueStats = (r: QueueRow): QueueStats => ({
  queuedRuns: r.queued_runs,
  runningRuns: r.running_runs,
  heldRuns: r.held_runs,
  pendingEvents: r.pending_events,
  pendingDeliveries: r.pending_deliveries,
  oldestQueuedRunAt: r.oldest_run,
  oldestPendingEventAt: r.oldest_event,
  oldestPendingDeliveryAt: r.oldest_delivery,
});

/** Runs counted by state from `state, n` rows, every known state present (zero when none). */
export function toRunCounts(rows: ReadonlyArray<{ state: RunState; n: number }>): RunCounts {
  const counts = Object.fromEntries(RUN_STATES.map((s) => [s, 0])) as RunCounts;
  for (const row of rows) if (Object.hasOwn(counts, row.state)) counts[row.state] = row.n;
  return counts;
}

/**
 * A request record's row on PostgreSQL (SQLite keeps records in batches, `sqlite/request-batch.ts`):
 * the id lists are `text[]`, and `bigint` comes back as a string.
 */
export interface RequestRow {
  id: string;
  at: number | string;
  method: string;
  path: string;
  hook: string | null;
  client: string;
  status: number;
  code: string | null;
  reason: string | null;
  duration_ms: number;
  event_ids: string[];
  run_ids: string[];
  payload: string | null;
  /** JSON text; `null` in rows written before it was kept, and without a payload. */
  headers?: string | null;
}

export const toRequestRecord = (r: RequestRow): RequestRecord => ({
  id: r.id,
  at: Number(r.at),
  method: r.method,
  path: r.path,
  hook: r.hook,
  client: r.client,
  status: r.status,
  code: r.code,
  reason: r.reason,
  durationMs: r.duration_ms,
  eventIds: r.event_ids,
  runIds: r.run_ids,
  payload: r.payload,
  headers: r.headers == null ? null : (JSON.parse(r.headers) as Record<string, string>),
});

/** A `catch_up` row as both stores read it (`CATCH_UP_COLUMNS`). */
export interface CatchUpRow {
  mapping_id: string;
  cursor_at: number | string | null;
  last_id: string | null;
  resume_after: string | null;
  updated_at: number | string | null;
}

export const CATCH_UP_COLUMNS = 'mapping_id, cursor_at, last_id, resume_after, updated_at';

export const toCatchUp = (r: CatchUpRow): CatchUpRecord => ({
  mappingId: r.mapping_id,
  cursorAt: r.cursor_at === null ? null : Number(r.cursor_at),
  lastId: r.last_id,
  resumeAfter: r.resume_after,
  updatedAt: r.updated_at === null ? null : Number(r.updated_at),
});
