/**
 * The pull API's JSON, both ways: what a home asks (`/relay/lease`, `/relay/ack`) and what a relay
 * answers. Each side parses what the other sends as untrusted input.
 */
import { RequestError, type Issue } from '../common/errors.js';
import type { LeasedRelayRequest, RelayAuth, RelayRefusal } from '../store/index.js';

/** Ids one acknowledgement carries at most (a lease hands out at most 1,000). */
const MAX_ACK_IDS = 1000;
const MAX_ID_CHARS = 100;
const MAX_CODE_CHARS = 100;
/** A refusal's reason kept on the relay, at most. */
export const MAX_REASON_CHARS = 1000;

interface LeaseAsk {
  /** Seconds the relay may wait for a request when none is waiting. */
  waitSeconds: number;
  /** Requests wanted at most. */
  max: number;
}

interface AckAsk {
  leaseId: string | null;
  /** Requests the home committed (or found already committed, or a transform skipped). */
  ids: string[];
  /** Requests the home's door refused, with its answer. */
  refused: RelayRefusal[];
}

/** One request of a lease as it travels: the body in base64. */
interface WireRequest {
  id: string;
  hook: string;
  url: string;
  headers: Record<string, string>;
  body: string;
  auth: RelayAuth;
  receivedAt: number;
  attempts: number;
}

export interface LeaseAnswer {
  leaseId: string;
  leaseSeconds: number;
  requests: LeasedRelayRequest[];
}

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);
const invalid = (issues: Issue[]): RequestError =>
  new RequestError('invalid_payload', {
    message: `Invalid relay request: ${issues.map((i) => `${i.path} ${i.message}`).join('; ')}.`,
    issues,
  });

/** The body as a JSON object; an empty body is `{}` (every field has a default). */
function readObject(body: Buffer): Json {
  if (body.length === 0) return {};
  let value: unknown;
  try {
    value = JSON.parse(body.toString('utf8'));
  } catch {
    throw new RequestError('invalid_json');
  }
  if (!isObject(value)) throw new RequestError('invalid_body');
  return value;
}

function readInt(o: Json, key: string, range: { min: number; max: number }, fallback: number, issues: Issue[]): number {
  const v = o[key];
  if (v === undefined) return fallback;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < range.min || v > range.max) {
    issues.push({ path: key, message: `must be an integer from ${range.min} to ${range.max}` });
    return fallback;
  }
  return v;
}

const isId = (v: unknown): v is string => typeof v === 'string' && v.length > 0 && v.length <= MAX_ID_CHARS;

/** `POST /relay/lease` `{"waitSeconds"?, "max"?}`, each within the relay's own bounds. */
export function parseLeaseAsk(body: Buffer, bounds: { maxWaitSeconds: number; maxBatch: number }): LeaseAsk {
  const o = readObject(body);
  const issues: Issue[] = [];
  const waitSeconds = readInt(o, 'waitSeconds', { min: 0, max: 300 }, bounds.maxWaitSeconds, issues);
  const max = readInt(o, 'max', { min: 1, max: 1000 }, bounds.maxBatch, issues);
  if (issues.length > 0) throw invalid(issues);
  return { waitSeconds: Math.min(waitSeconds, bounds.maxWaitSeconds), max: Math.min(max, bounds.maxBatch) };
}

/** `POST /relay/ack` `{"leaseId"?, "ids": [...], "refused": [{"id","status","code","reason"}]}`. */
export function parseAckAsk(body: Buffer): AckAsk {
  const o = readObject(body);
  const issues: Issue[] = [];
  const leaseId = o['leaseId'];
  if (leaseId !== undefined && !isId(leaseId)) issues.push({ path: 'leaseId', message: 'must be a lease id' });
  const ids = o['ids'] ?? [];
  if (!Array.isArray(ids) || ids.length > MAX_ACK_IDS || !ids.every(isId))
    issues.push({ path: 'ids', message: `must be an array of at most ${MAX_ACK_IDS} request ids` });
  const refused = o['refused'] ?? [];
  const refusals: RelayRefusal[] = [];
  if (!Array.isArray(refused) || refused.length > MAX_ACK_IDS) {
    issues.push({ path: 'refused', message: `must be an array of at most ${MAX_ACK_IDS} refusals` });
  } else {
    refused.forEach((r: unknown, i) => {
      const ok =
        isObject(r) &&
        isId(r['id']) &&
        typeof r['status'] === 'number' &&
        Number.isInteger(r['status']) &&
        r['status'] >= 400 &&
        r['status'] <= 499 &&
        typeof r['code'] === 'string' &&
        r['code'].length <= MAX_CODE_CHARS &&
        typeof r['reason'] === 'string';
      if (!ok) {
        issues.push({ path: `refused[${i}]`, message: 'must be {id, status (4xx), code, reason}' });
        return;
      }
      refusals.push({
        id: r['id'] as string,
        status: r['status'] as number,
        code: r['code'] as string,
        reason: (r['reason'] as string).slice(0, MAX_REASON_CHARS),
      });
    });
  }
  if (issues.length > 0) throw invalid(issues);
  return { leaseId: leaseId === undefined ? null : (leaseId as string), ids: ids as string[], refused: refusals };
}

/** A leased request as the relay sends it. */
export function toWire(r: LeasedRelayRequest): WireRequest {
  return { ...r, body: r.body.toString('base64') };
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

function parseWireRequest(v: unknown): LeasedRelayRequest | null {
  if (!isObject(v)) return null;
  const { id, hook, url, headers, body, auth, receivedAt, attempts } = v;
  if (!isId(id) || typeof hook !== 'string' || hook === '' || typeof url !== 'string' || !url.startsWith('/'))
    return null;
  if (!isObject(headers) || !Object.values(headers).every((h) => typeof h === 'string')) return null;
  if (typeof body !== 'string' || body.length % 4 !== 0 || !BASE64.test(body)) return null;
  if (auth !== 'token' && auth !== 'signature') return null;
  if (typeof receivedAt !== 'number' || !Number.isSafeInteger(receivedAt)) return null;
  if (typeof attempts !== 'number' || !Number.isSafeInteger(attempts)) return null;
  return {
    id,
    hook,
    url,
    // Lower-case names, as Node gives a request's headers to the door.
    headers: Object.fromEntries(
      Object.entries(headers as Record<string, string>).map(([k, h]) => [k.toLowerCase(), h]),
    ),
    body: Buffer.from(body, 'base64'),
    auth,
    receivedAt,
    attempts,
  };
}

/** What a relay answered to a lease; throws naming what is wrong with it. */
export function parseLeaseAnswer(text: string): LeaseAnswer {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    throw new Error('the relay answered a lease with something that is not JSON');
  }
  if (!isObject(v) || v['ok'] !== true || !isId(v['leaseId']) || !Array.isArray(v['requests']))
    throw new Error('the relay answered a lease without {ok, leaseId, requests}');
  const leaseSeconds = v['leaseSeconds'];
  const requests: LeasedRelayRequest[] = [];
  for (const [i, r] of v['requests'].entries()) {
    const parsed = parseWireRequest(r);
    if (parsed === null) throw new Error(`the relay's lease holds a malformed request (requests[${i}])`);
    requests.push(parsed);
  }
  return {
    leaseId: v['leaseId'],
    leaseSeconds: typeof leaseSeconds === 'number' && leaseSeconds > 0 ? leaseSeconds : 0,
    requests,
  };
}
