import { linkSignals } from '../common/link-signals.js';
import { parseRetryAfterMs } from '../common/retry.js';
import { sendRequest, type HttpResponse } from '../common/send-request.js';
import type { RelayRefusal } from '../store/index.js';
import { parseLeaseAnswer, type LeaseAnswer } from './relay-wire.js';

/** A pull the relay refused or could not be reached for: what to tell the operator, and its hint. */
export class RelayCallError extends Error {
  constructor(
    message: string,
    /** The relay's status, when it answered. */
    readonly status: number | null,
    /** `Retry-After`, when it sent one. */
    readonly retryAfterMs: number | undefined,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'RelayCallError';
  }
}

/** The home's side of the pull API. */
export interface RelayClient {
  /** Leases up to `max` requests, waiting at the relay up to `waitSeconds` for one. */
  lease(ask: { waitSeconds: number; max: number }, signal: AbortSignal): Promise<LeaseAnswer>;
  /** Acknowledges what this home committed and what its door refused. */
  ack(
    ask: { leaseId: string; ids: readonly string[]; refused: readonly RelayRefusal[] },
    signal: AbortSignal,
  ): Promise<void>;
}

interface RelayClientOptions {
  /** The relay's base URL (`pull.url`). */
  url: string;
  token: string;
  /** A new connection (and its TLS handshake) not made within this fails the call. */
  connectTimeoutMs: number;
  /** A call's answer not complete this long after its wait is over fails it (a relay that stopped answering). */
  answerTimeoutMs?: number;
  now?: () => number;
  /** Replaces the HTTP call (tests). @default sendRequest (node:http/https, keep-alive) */
  send?: typeof sendRequest;
}

/** What an error answer says, briefly: its code and message, never more than a line. */
function describeRefusal(res: HttpResponse): string {
  try {
    const body = JSON.parse(res.text) as { code?: unknown; error?: unknown };
    if (typeof body.code === 'string')
      return `${res.status} ${body.code}${typeof body.error === 'string' ? `: ${body.error}` : ''}`;
  } catch {
    // Not JSON: a proxy's page.
  }
  return `${res.status}`;
}

/**
 * Calls the relay over one kept-alive HTTP(S) connection (`node:http`/`node:https`), with the relay
 * token as a bearer token, a connect timeout, an answer timeout past the long poll's wait, and the
 * caller's signal. A non-2xx answer or a malformed one is a `RelayCallError`.
 */
export function createRelayClient(o: RelayClientOptions): RelayClient {
  const base = o.url.replace(/\/+$/, '');
  const send = o.send ?? sendRequest;
  const now = o.now ?? Date.now;
  const answerTimeoutMs = o.answerTimeoutMs ?? 15_000;
  const call = async (path: string, body: unknown, waitMs: number, signal: AbortSignal): Promise<HttpResponse> => {
    const timeout = AbortSignal.timeout(waitMs + answerTimeoutMs);
    const linked = linkSignals([signal, timeout]);
    let res: HttpResponse;
    try {
      res = await send(`${base}${path}`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${o.token}`,
          'content-type': 'application/json',
          accept: 'application/json',
        },
        body: JSON.stringify(body),
        signal: linked.signal,
        connectTimeoutMs: o.connectTimeoutMs,
      });
    } catch (error) {
      const why = timeout.aborted ? 'no answer in time' : (error as Error).message;
      throw new RelayCallError(`the relay at ${base} cannot be reached (${why})`, null, undefined, { cause: error });
    } finally {
      linked.dispose();
    }
    if (res.status < 200 || res.status > 299)
      throw new RelayCallError(
        `the relay at ${base} refused ${path} (${describeRefusal(res)})`,
        res.status,
        parseRetryAfterMs(res.headers.get('retry-after'), now()),
      );
    return res;
  };
  return {
    async lease(ask, signal) {
      const res = await call('/relay/lease', ask, ask.waitSeconds * 1000, signal);
      try {
        return parseLeaseAnswer(res.text);
      } catch (error) {
        throw new RelayCallError(`the relay at ${base}: ${(error as Error).message}`, res.status, undefined);
      }
    },
    async ack(ask, signal) {
      await call('/relay/ack', ask, 0, signal);
    },
  };
}
