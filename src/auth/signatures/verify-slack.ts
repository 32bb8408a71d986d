import { checkTimestamp, decodeDigest, headerOf, hmac, jsonStringField, sameDigest, secretsOf } from './_crypto.js';
import { DEFAULT_TOLERANCE_SECONDS, type VerifyInput, type VerifyResult } from './verify-types.js';

const PREFIX = 'v0=';

/**
 * Slack: `X-Slack-Signature: v0=<hex HMAC-SHA256 of "v0:<X-Slack-Request-Timestamp>:<body>">`
 * keyed with the app's signing secret. Covers Events API (JSON) and slash commands and
 * interactivity (form-encoded) alike, since it is computed over the bytes.
 */
export function verifySlack(
  spec: { secret: string | readonly string[]; toleranceSeconds?: number | undefined },
  input: VerifyInput,
): VerifyResult {
  const header = headerOf(input.headers, 'x-slack-signature');
  if (header === undefined || !header.startsWith(PREFIX)) return { ok: false, reason: 'missing X-Slack-Signature' };
  const ts = headerOf(input.headers, 'x-slack-request-timestamp');
  const time = checkTimestamp(ts, input.nowMs, spec.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS);
  if (typeof time !== 'number') return time;
  const received = decodeDigest(header.slice(PREFIX.length), 'hex');
  const ok = secretsOf(spec.secret).some((s) => sameDigest(hmac('sha256', s, [`v0:${ts}:`, input.rawBody]), received));
  if (!ok) return { ok: false, reason: 'X-Slack-Signature does not match the body' };
  const result: { ok: true; deliveryId?: string; retryNum?: number } = { ok: true };
  const eventId = jsonStringField(input.rawBody, 'event_id');
  if (eventId !== undefined) result.deliveryId = eventId;
  const retry = headerOf(input.headers, 'x-slack-retry-num');
  if (retry !== undefined && /^\d{1,4}$/.test(retry)) result.retryNum = Number(retry);
  return result;
}
