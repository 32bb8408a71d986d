import type { NewLogEvent } from './types.js';
import type { LogEventRecord, SubscriptionRecord, SubscriptionState, SubscriptionView } from './event-log-types.js';
import type { NewRun } from './types.js';

/** The mark naming how far retention has deleted the event log. */
export const PRUNED_THROUGH_MARK = 'event_log.pruned_through';

/** A log event's columns, in the order both drivers insert them. */
export function logEventValues(
  e: NewLogEvent,
): [string, string, string | null, string | null, number, string, boolean] {
  return [e.id, e.name, e.agentId, e.requestId, e.createdAt, JSON.stringify(e.data), e.untrusted];
}

/**
 * The occurrence a run's request publishes, once the store knows whether the run joined a queued
 * run: then `data.runId` names the run that exists, and `data.coalesced` says so.
 */
export function publishedOfRun(run: NewRun, joined: string | undefined): NewLogEvent | undefined {
  const p = run.published;
  if (p === undefined || joined === undefined) return p;
  return { ...p, data: { ...p.data, runId: joined, coalesced: true } };
}

export interface LogEventRow {
  seq: number | string;
  id: string;
  name: string;
  agent_id: string | null;
  request_id: string | null;
  created_at: number | string;
  data: string;
  untrusted: number | boolean;
}

export function toLogEvent(r: LogEventRow): LogEventRecord {
  return {
    seq: Number(r.seq),
    id: r.id,
    name: r.name,
    agentId: r.agent_id,
    requestId: r.request_id,
    createdAt: Number(r.created_at),
    dataJson: r.data,
    untrusted: r.untrusted === true || r.untrusted === 1,
  };
}

export interface SubscriptionRow {
  id: string;
  name: string;
  arguments: string;
  url: string;
  secret: string;
  cursor: number | string;
  state: string;
  end_reason: string | null;
  expires_at: number | string | null;
  max_age_ms: number | string | null;
  attempts: number;
  next_attempt_at: number | string;
  last_error: string | null;
  last_delivery_at: number | string | null;
  delivered: number | string;
  lease_owner: string | null;
  lease_until: number | string | null;
  created_at: number | string;
  updated_at: number | string;
}

const num = (v: number | string | null): number | null => (v === null ? null : Number(v));

export function toSubscription(r: SubscriptionRow): SubscriptionRecord {
  return {
    id: r.id,
    name: r.name,
    argumentsJson: r.arguments,
    url: r.url,
    secret: r.secret,
    cursor: Number(r.cursor),
    state: r.state as SubscriptionState,
    endReason: r.end_reason,
    expiresAt: num(r.expires_at),
    maxAgeMs: num(r.max_age_ms),
    attempts: r.attempts,
    nextAttemptAt: Number(r.next_attempt_at),
    lastError: r.last_error,
    lastDeliveryAt: num(r.last_delivery_at),
    delivered: Number(r.delivered),
    leaseOwner: r.lease_owner,
    leaseUntil: num(r.lease_until),
    createdAt: Number(r.created_at),
    updatedAt: Number(r.updated_at),
  };
}

/** A subscription for operators: its arguments parsed, its secret left out. */
export function viewSubscription(s: SubscriptionRecord): SubscriptionView {
  const { secret: _secret, argumentsJson, ...rest } = s;
  return { ...rest, arguments: JSON.parse(argumentsJson) as Record<string, unknown> };
}

/** Refused by `saveSubscription`: the store already holds `max` subscriptions that have not ended. */
export class TooManySubscriptionsError extends Error {
  constructor(readonly max: number) {
    super(`at most ${max} subscriptions may be held at once (mcp.maxSubscriptions)`);
    this.name = 'TooManySubscriptionsError';
  }
}
