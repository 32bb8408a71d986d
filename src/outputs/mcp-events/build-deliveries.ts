import { createHash } from 'node:crypto';
import type { LogEventRecord } from '../../store/index.js';
import { encodeCursor } from './cursor.js';

/** The most a delivery body may be (OpenAI's profile; the extension's SHOULD). */
export const MAX_DELIVERY_BYTES = 256 * 1024;

/** How long a text field stays in a truncated occurrence. */
const KEPT_CHARS = 16 * 1024;

/** The fields of `data` a truncated occurrence keeps whole: ids, names, times, states. */
const KEPT_FIELDS = [
  'hook',
  'action',
  'agentId',
  'requestId',
  'receivedAt',
  'mode',
  'name',
  'sessionKey',
  'eventId',
  'runId',
  'coalesced',
  'state',
  'finishedAt',
  'error',
  'untrusted',
] as const;
/** The text fields a truncated occurrence keeps the start of. */
const CLIPPED_FIELDS = ['text', 'message', 'reply'] as const;

/**
 * `data` small enough to send: the stored text as it is when the delivery fits in 256 KiB, else a
 * copy with the raw payload left out, long texts cut to their first 16 Ki characters, and
 * `truncated: true` (with the size it had), so a subscriber knows to fetch the rest.
 */
export function boundedData(dataJson: string, budgetBytes: number): string {
  if (Buffer.byteLength(dataJson) <= budgetBytes) return dataJson;
  const data = JSON.parse(dataJson) as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const key of KEPT_FIELDS) if (key in data) out[key] = data[key];
  for (const key of CLIPPED_FIELDS) {
    const v = data[key];
    if (typeof v === 'string') out[key] = v.length > KEPT_CHARS ? v.slice(0, KEPT_CHARS) : v;
  }
  out['truncated'] = true;
  out['originalBytes'] = Buffer.byteLength(dataJson);
  const text = JSON.stringify(out);
  if (Buffer.byteLength(text) <= budgetBytes) return text;
  for (const key of CLIPPED_FIELDS) delete out[key];
  return JSON.stringify(out);
}

/** An occurrence as delivered: `{eventId, name, timestamp, data, cursor}`, `data` as stored (or cut down). */
export function eventBody(event: LogEventRecord): string {
  const head = `{"eventId":${JSON.stringify(event.id)},"name":${JSON.stringify(event.name)},"timestamp":"${new Date(event.createdAt).toISOString()}","cursor":"${encodeCursor(event.seq)}","data":`;
  const data = boundedData(event.dataJson, MAX_DELIVERY_BYTES - Buffer.byteLength(head) - 1);
  return `${head}${data}}`;
}

/** A control message's `webhook-id`: the same for every retry of it, so a receiver can deduplicate. */
export function controlMessageId(type: string, subscriptionId: string, detail: string): string {
  return `msg_${type}_${createHash('sha256').update(`${subscriptionId}:${detail}`).digest('hex').slice(0, 24)}`;
}

export const gapBody = (cursor: number): string => JSON.stringify({ type: 'gap', cursor: encodeCursor(cursor) });

export const terminatedBody = (error: { code: number; message: string; data: Record<string, unknown> }): string =>
  JSON.stringify({ type: 'terminated', error });

export const verificationBody = (challenge: string): string => JSON.stringify({ type: 'verification', challenge });
