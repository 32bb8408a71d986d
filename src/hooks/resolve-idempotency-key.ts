import { createHash } from 'node:crypto';
import { RequestError } from '../common/errors.js';
import type { MappedHookCall } from './mappings/build-mapped-request.js';

/** Visible ASCII, as header values and logs can carry them whole. */
const KEY = /^[\x21-\x7e]{1,255}$/;

function header(headers: MappedHookCall['headers'], name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/**
 * The identity a repeat of this request would carry: the client's `Idempotency-Key`, else the id
 * the sender gives each delivery — from its signature scheme (`X-GitHub-Delivery`, `webhook-id`),
 * a Stripe event's `id`, a Slack event's `event_id` (Slack resends it with `X-Slack-Retry-Num`).
 * `null` when the request carries none. A malformed `Idempotency-Key` is a 400.
 */
export function resolveIdempotencyKey(call: MappedHookCall): string | null {
  const given = header(call.headers, 'idempotency-key');
  if (given !== undefined) {
    const key = given.trim();
    if (!KEY.test(key)) throw new RequestError('invalid_idempotency_key');
    return key;
  }
  if (call.deliveryId !== undefined && call.deliveryId !== '') return boundKey(`delivery:${call.deliveryId}`);
  const p = call.payload;
  if (p['object'] === 'event' && typeof p['id'] === 'string' && p['id'].startsWith('evt_'))
    return boundKey(`stripe:${p['id']}`);
  if (p['type'] === 'event_callback' && typeof p['event_id'] === 'string' && p['event_id'] !== '')
    return boundKey(`slack:${p['event_id']}`);
  return null;
}

/**
 * A digest of the payload a client's own `Idempotency-Key` came with, or `null` for a key the
 * gateway found itself (a sender's delivery id names one delivery, whose retries are the same).
 */
export function idempotencyFingerprint(call: MappedHookCall): string | null {
  if (header(call.headers, 'idempotency-key') === undefined) return null;
  return `sha256:${createHash('sha256').update(JSON.stringify(call.payload)).digest('hex')}`;
}

/** The longest key stored as it is; the `Idempotency-Key` header's own bound. */
const MAX_KEY_CHARS = 255;

/**
 * A key made from what the sender sent (a payload's id, a delivery header, an item's id) as it is
 * stored: up to 255 characters as is, a longer one as `sha256:` and its digest, so a key the size
 * of the body neither bloats the key table nor exceeds what PostgreSQL can index (a 500 before).
 */
export function boundKey(key: string): string {
  return key.length <= MAX_KEY_CHARS ? key : `sha256:${createHash('sha256').update(key).digest('hex')}`;
}
