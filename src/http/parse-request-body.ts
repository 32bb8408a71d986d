import { RequestError } from '../common/errors.js';
import { textExceedsJsonDepth } from '../common/json-depth.js';
import type { Payload } from '../hooks/index.js';

const FORM = /^application\/x-www-form-urlencoded\s*(;|$)/i;

/** Whether the request declares an HTML form body (Slack slash commands, Twilio). */
export function isFormBody(contentType: string | undefined): boolean {
  return contentType !== undefined && FORM.test(contentType);
}

/**
 * Whether a body is JSON by its first byte past JSON's whitespace: `{` or `[`. No form
 * field starts with either, and curl's `-d '{…}'` declares a form: a JSON body is JSON whatever its
 * `Content-Type` says, as OpenClaw reads it.
 */
function looksLikeJson(raw: Buffer): boolean {
  let i = 0;
  while (i < raw.length && (raw[i] === 0x20 || raw[i] === 0x09 || raw[i] === 0x0a || raw[i] === 0x0d)) i++;
  return raw[i] === 0x7b || raw[i] === 0x5b;
}

/**
 * A mapped hook's payload: a form (Slack commands, Twilio) only when it is declared one and is not
 * JSON, else a JSON object. Signatures are checked over the raw bytes before this, whichever it is.
 */
export function parseHookBody(raw: Buffer, contentType: string | undefined): Payload {
  return isFormBody(contentType) && !looksLikeJson(raw) ? parseFormObject(raw) : parseJsonObject(raw);
}

/** A JSON object, or `invalid_json` / `json_too_deep` / `invalid_body` (400). */
export function parseJsonObject(raw: Buffer): Payload {
  if (raw.length === 0)
    throw new RequestError('invalid_json', { message: 'Request body is empty; send a JSON object.' });
  // Refused before parsing: deeper values overflow the stack wherever they are serialised later.
  if (textExceedsJsonDepth(raw)) throw new RequestError('json_too_deep');
  let value: unknown;
  try {
    value = JSON.parse(raw.toString('utf8'));
  } catch {
    throw new RequestError('invalid_json');
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new RequestError('invalid_body');
  return value as Payload;
}

/**
 * A form body as an object of strings; a repeated field becomes an array of its values in order.
 * The object has no prototype, so a field named `__proto__` is only a field.
 */
export function parseFormObject(raw: Buffer): Payload {
  const text = raw.toString('utf8');
  if (text.trim() === '') throw new RequestError('invalid_body', { message: 'Request body is an empty form.' });
  const out = Object.create(null) as Record<string, string | string[]>;
  for (const [key, value] of new URLSearchParams(text)) {
    const prev = out[key];
    // Appended in place: a copy per repeat made a body of one field repeated 131,000 times (256 KiB) a quadratic copy.
    if (prev === undefined) out[key] = value;
    else if (Array.isArray(prev)) prev.push(value);
    else out[key] = [prev, value];
  }
  return out;
}
