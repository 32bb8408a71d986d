import type { IncomingHttpHeaders } from 'node:http';

/** What every verifier looks at: the headers, the body exactly as received, and the time. */
export interface VerifyInput {
  headers: IncomingHttpHeaders;
  rawBody: Buffer;
  nowMs: number;
}

/**
 * A verifier's answer. `deliveryId` is the sender's own id for this delivery when it has one
 * (GitHub `X-GitHub-Delivery`, Standard Webhooks `webhook-id`, Stripe event `id`, Slack
 * `event_id`); `retryNum` is Slack's `X-Slack-Retry-Num`, present only on a retry. `reason` says
 * why a request was refused, without any secret in it.
 */
export type VerifyResult = { ok: true; deliveryId?: string; retryNum?: number } | { ok: false; reason: string };

/** Timestamp tolerance when a mapping sets none: five minutes either way. */
export const DEFAULT_TOLERANCE_SECONDS = 300;
