import { RequestError } from '../common/errors.js';

/** An admin API call as plain values: `path` is what follows `/admin/api`. */
export interface AdminCall {
  method: string;
  path: string;
  query: URLSearchParams;
  /** The operator's address, as the lockout sees it. */
  client: string;
}

export interface AdminAnswer {
  status: number;
  body: Record<string, unknown>;
}

/** One endpoint of the admin API: its method, its path (groups are its parameters) and what it does. */
export type AdminRoute = {
  method: 'GET' | 'POST';
  pattern: RegExp;
  run: (params: string[], query: URLSearchParams, call: AdminCall) => Promise<AdminAnswer>;
};

export const ok = (body: Record<string, unknown>, status = 200): AdminAnswer => ({
  status,
  body: { ok: true, ...body },
});

export const found = <T>(value: T | null): T => {
  if (value === null) throw new RequestError('record_not_found');
  return value;
};
