import type { Clock } from '../common/clock.js';
import type { Wakeup } from '../common/create-wakeup.js';
import { RequestError } from '../common/errors.js';
import type { Ids } from '../common/ids.js';
import type { RelayConfig } from '../config/index.js';
import type { RelayQueue } from '../store/index.js';
import { parseAckAsk, parseLeaseAsk, toWire } from './relay-wire.js';

/** A pull API call as plain values: `path` is `/relay/lease` or `/relay/ack`. */
interface RelayApiCall {
  path: string;
  body: Buffer;
  /** Aborts when the home hung up (a long poll ends then). */
  signal: AbortSignal;
}

interface RelayApiAnswer {
  status: number;
  body: string;
}

/** What the relay's own side sees of its pull API (metrics). */
export interface RelayApiObserver {
  leased(count: number): void;
  acknowledged(counts: { done: number; refused: number }): void;
}

interface RelayApiDeps {
  store: Pick<RelayQueue, 'leaseRelayRequests' | 'ackRelayRequests'>;
  config: Pick<RelayConfig, 'leaseSeconds' | 'maxBatch' | 'maxBatchBytes' | 'maxWaitSeconds' | 'maxLeases'>;
  /** Announced by the relay's door after each commit. */
  wakeup: Wakeup;
  clock: Clock;
  ids: Ids;
  /**
   * How often a waiting lease looks at the store without an announcement: requests recorded by
   * another relay sharing the store (PostgreSQL), leases that expired. @default 1000
   */
  recheckMs?: number;
  observer?: RelayApiObserver;
}

interface RelayApi {
  handle(call: RelayApiCall): Promise<RelayApiAnswer>;
  /** Ends every waiting lease now (answered with what there is), for a shutdown. */
  close(): void;
}

/**
 * The pull API's core. `lease`: the oldest pending requests under a new lease id, at once when there
 * are any, else as soon as one is committed, up to the asked wait (the relay's cap); an empty batch
 * when the wait ends. `ack`: the requests the home committed, and those its door refused (dead
 * letters with its answer). Bad input is a 400 naming each field.
 */
export function createRelayApi(deps: RelayApiDeps): RelayApi {
  const { store, config, wakeup, clock } = deps;
  const recheckMs = deps.recheckMs ?? 1000;
  const closing = new AbortController();

  const lease = async (body: Buffer, signal: AbortSignal): Promise<RelayApiAnswer> => {
    const ask = parseLeaseAsk(body, config);
    const leaseId = deps.ids.next();
    const deadline = clock.now() + ask.waitSeconds * 1000;
    for (;;) {
      const generation = wakeup.generation();
      // A home that left gets nothing leased for it (it would wait out the lease for nothing).
      if (signal.aborted) return answer(leaseId, []);
      const requests = await store.leaseRelayRequests({
        leaseId,
        limit: ask.max,
        maxBytes: config.maxBatchBytes,
        leaseMs: config.leaseSeconds * 1000,
        maxLeases: config.maxLeases,
      });
      const left = deadline - clock.now();
      if (requests.length > 0 || left <= 0 || closing.signal.aborted) {
        deps.observer?.leased(requests.length);
        return answer(leaseId, requests.map(toWire));
      }
      await wakeup.wait(generation, Math.min(recheckMs, left), [signal, closing.signal]);
    }
  };
  const answer = (leaseId: string, requests: unknown[]): RelayApiAnswer => ({
    status: 200,
    body: JSON.stringify({ ok: true, leaseId, leaseSeconds: config.leaseSeconds, requests }),
  });
  const ack = async (body: Buffer): Promise<RelayApiAnswer> => {
    const ask = parseAckAsk(body);
    const counts = await store.ackRelayRequests({ done: ask.ids, refused: ask.refused, at: clock.now() });
    deps.observer?.acknowledged(counts);
    return { status: 200, body: JSON.stringify({ ok: true, ...counts }) };
  };
  return {
    handle(call) {
      if (call.path === '/relay/lease') return lease(call.body, call.signal);
      if (call.path === '/relay/ack') return ack(call.body);
      return Promise.reject(new RequestError('not_found'));
    },
    close: () => closing.abort(),
  };
}
