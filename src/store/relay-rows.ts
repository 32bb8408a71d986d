import type { LeasedRelayRequest, RelayAuth, RelayRequestRecord, RelayState } from './relay-queue.js';

/** A `relay_requests` row as a lease reads it, on either driver. */
export interface LeasedRelayRow {
  seq: number | string;
  id: string;
  hook: string;
  url: string;
  headers: string;
  body: Buffer;
  bytes: number;
  auth: string;
  received_at: number | string;
  /** Leases before this one. */
  attempts: number;
}

/**
 * Which candidates (oldest first) a lease takes: up to `maxBytes` of bodies (always the first), and
 * never one already leased `maxLeases` times: those are dead-lettered instead.
 */
export function chooseLeased<T extends Pick<LeasedRelayRow, 'bytes' | 'attempts'>>(
  rows: readonly T[],
  o: { maxBytes: number; maxLeases: number },
): { chosen: T[]; dead: T[] } {
  const chosen: T[] = [];
  const dead: T[] = [];
  let bytes = 0;
  for (const row of rows) {
    if (row.attempts >= o.maxLeases) {
      dead.push(row);
      continue;
    }
    if (chosen.length > 0 && bytes + row.bytes > o.maxBytes) break;
    bytes += row.bytes;
    chosen.push(row);
  }
  return { chosen, dead };
}

export const toLeasedRelayRequest = (r: LeasedRelayRow): LeasedRelayRequest => ({
  id: r.id,
  hook: r.hook,
  url: r.url,
  headers: JSON.parse(r.headers) as Record<string, string>,
  body: r.body,
  auth: r.auth as RelayAuth,
  receivedAt: Number(r.received_at),
  attempts: r.attempts + 1,
});

/** A row as operators list it (`RELAY_RECORD_COLUMNS`). */
export interface RelayRecordRow {
  id: string;
  hook: string;
  auth: string;
  state: string;
  received_at: number | string;
  attempts: number;
  lease_until: number | string | null;
  ended_at: number | string | null;
  status: number | null;
  code: string | null;
  reason: string | null;
  bytes: number;
}

export const RELAY_RECORD_COLUMNS =
  'id, hook, auth, state, received_at, attempts, lease_until, ended_at, status, code, reason, bytes';

const num = (v: number | string | null): number | null => (v === null ? null : Number(v));

export const toRelayRecord = (r: RelayRecordRow): RelayRequestRecord => ({
  id: r.id,
  hook: r.hook,
  auth: r.auth as RelayAuth,
  state: r.state as RelayState,
  receivedAt: Number(r.received_at),
  attempts: r.attempts,
  leaseUntil: r.state === 'pending' ? num(r.lease_until) : null,
  endedAt: num(r.ended_at),
  status: r.status,
  code: r.code,
  reason: r.reason,
  bytes: r.bytes,
});
