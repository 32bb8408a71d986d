import type { NewLogEvent } from './types.js';
import type { NewSystemEvent } from './types.js';

/** One hook request as the gateway answered it, accepted or rejected. */
export interface RequestRecord {
  /** UUIDv7, so records sort by arrival. */
  id: string;
  /** Arrival time, ms since the epoch. */
  at: number;
  method: string;
  /** Path without the query string (a query may carry a token). */
  path: string;
  /** The hook name after `hooks.path` (`wake`, `agent`, a mapping's name); `null` when the path names none. */
  hook: string | null;
  /** The client address as the lockout sees it (after trusted proxies). */
  client: string;
  /** The HTTP status answered; 499 when the client went away before the answer. */
  status: number;
  /** The error code of a rejection; `null` when accepted. */
  code: string | null;
  /** Why it was rejected, in words (the public message, the offending fields, a transform's error). */
  reason: string | null;
  /** From arrival until the answer was decided (for accepted requests: until their action was queued for commit), to the microsecond. */
  durationMs: number;
  /** System events the request created. */
  eventIds: readonly string[];
  /** Agent runs the request created. */
  runIds: readonly string[];
  /** The raw body (UTF-8), only with `gateway.recordPayloads: true`. */
  payload: string | null;
  /** The request's headers, lower-case, without those carrying credentials; kept with the payload only. */
  headers: Readonly<Record<string, string>> | null;
}

/** Filters for listing request records, newest first. */
export interface ListRequestsOptions {
  /** @default 20 */
  limit?: number;
  hook?: string;
  status?: number;
}

/** Cancelling a queued run: its outcome and the summary it posts, written together. */
export interface RunCancellation {
  runId: string;
  finishedAt: number;
  /** Stored as the run's error. */
  error: string;
  /** The summary posted to the agent's main session. */
  summary: NewSystemEvent;
  /** The run's `run.finished` occurrence, written with it (MCP Events on). */
  published?: NewLogEvent;
}
