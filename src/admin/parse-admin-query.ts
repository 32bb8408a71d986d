import { RequestError } from '../common/errors.js';
import type { DeliveryState, RunState } from '../store/index.js';

const RUN_STATES: readonly RunState[] = ['queued', 'running', 'succeeded', 'failed', 'timed_out'];
const DELIVERY_STATES: readonly DeliveryState[] = ['pending', 'sent', 'failed', 'skipped'];
/** Bounds on a listing, so one call cannot read a whole table. */
const DEFAULT_LIMIT = 50;
const MAX_LIMIT = 500;

const invalid = (path: string, message: string): RequestError =>
  new RequestError('invalid_query', {
    message: `Query parameter ${path} is invalid: ${message}`,
    issues: [{ path, message }],
  });

/** `?limit=` in 1..500, default 50. */
export function parseLimit(query: URLSearchParams): number {
  const raw = query.get('limit');
  if (raw === null || raw === '') return DEFAULT_LIMIT;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > MAX_LIMIT) throw invalid('limit', `an integer from 1 to ${MAX_LIMIT}`);
  return n;
}

function parseEnum<T extends string>(query: URLSearchParams, key: string, values: readonly T[]): T | undefined {
  const raw = query.get(key);
  if (raw === null || raw === '') return undefined;
  if (!(values as readonly string[]).includes(raw)) throw invalid(key, `one of ${values.join(', ')}`);
  return raw as T;
}

export const parseRunState = (query: URLSearchParams): RunState | undefined => parseEnum(query, 'state', RUN_STATES);
export const parseDeliveryState = (query: URLSearchParams): DeliveryState | undefined =>
  parseEnum(query, 'state', DELIVERY_STATES);

/** `?status=` as an HTTP status code. */
export function parseStatus(query: URLSearchParams): number | undefined {
  const raw = query.get('status');
  if (raw === null || raw === '') return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 100 || n > 599) throw invalid('status', 'an HTTP status code');
  return n;
}

/** A flag such as `?dryRun=1`: `1`/`true` on, absent/`0`/`false` off. */
export function parseFlag(query: URLSearchParams, key: string): boolean {
  const raw = query.get(key);
  if (raw === null || raw === '0' || raw === 'false') return false;
  if (raw === '' || raw === '1' || raw === 'true') return true;
  throw invalid(key, '1 or 0');
}
