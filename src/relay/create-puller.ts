import type { Clock } from '../common/clock.js';
import { createThrottledLog } from '../common/create-throttled-log.js';
import type { Log } from '../common/log.js';
import type { LeasedRelayRequest, RelayRefusal } from '../store/index.js';
import type { RelayClient } from './create-relay-client.js';
import type { RelayedResult } from './pass-relayed-request.js';
import { pullRetryDelayMs } from './pull-retry-delay.js';

export interface PullerOptions {
  /** Seconds a lease may wait at the relay (`pull.waitSeconds`). */
  waitSeconds: number;
  /** Requests asked for per lease (`pull.batchSize`). */
  batchSize: number;
  /** Requests of a batch passed through the door at once (`pull.concurrency`). */
  concurrency: number;
  /** The longest pause between pulls while they fail (`pull.retryMaxSeconds`, in ms). */
  retryMaxMs: number;
  /** How often a relay that stays unreachable is logged again. @default 60000 */
  logEveryMs?: number;
  /** The acknowledgement of the batch in hand at shutdown is given this long. @default 5000 */
  stopAckMs?: number;
}

/** What a home's pull loop did lately, for its dashboard, `/readyz` and metrics. */
interface PullStatus {
  /** The relay answered the last lease. */
  relayUp: boolean;
  /** When pulls started failing (they fail still), else `null`. */
  failingSince: number | null;
  /** Why the last pull failed, while they fail. */
  lastError: string | null;
  lastLeaseAt: number | null;
  /** Requests pulled since start, by what this door made of them. */
  counts: { accepted: number; duplicate: number; skipped: number; refused: number; failed: number };
}

/** Sees each request passed (metrics). */
export interface PullObserver {
  passed(result: RelayedResult, receivedAt: number): void;
  relayUp(up: boolean): void;
}

interface PullerDeps {
  client: RelayClient;
  /** One relayed request through this gateway's door (pass-relayed-request.ts). */
  pass: (request: LeasedRelayRequest) => Promise<RelayedResult>;
  clock: Clock;
  log: Log;
  random: () => number;
  options: PullerOptions;
  observer?: PullObserver;
}

export interface Puller {
  start(): void;
  /** Stops leasing at once; the batch in hand is finished and acknowledged first. */
  stop(): Promise<void>;
  status(): PullStatus;
}

/** Runs `work` over `items` with at most `limit` at once; resolves with the results in order. */
async function mapBounded<T, R>(items: readonly T[], limit: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      out[i] = await work(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

/**
 * A home gateway's pull loop: long-polls the relay for a batch, passes each request through this
 * gateway's door (bounded concurrency, so their commits are grouped), and acknowledges what was
 * committed or refused only then. The next lease is asked for as a batch arrives, and a batch's
 * acknowledgement goes while the next one is passed, so neither round trip waits on the other. A request that failed here is left for the relay to offer again
 * after its lease. While the relay cannot be reached, or this gateway cannot commit, the loop waits
 * with backoff and jitter (`pullRetryDelayMs`), honouring `Retry-After`, logging the outage once
 * and then once per `logEveryMs`; the door keeps serving meanwhile. Time is the injected clock's.
 */
export function createPuller(deps: PullerDeps): Puller {
  const { client, clock, log, options } = deps;
  const counts: PullStatus['counts'] = { accepted: 0, duplicate: 0, skipped: 0, refused: 0, failed: 0 };
  const status: Omit<PullStatus, 'counts'> = { relayUp: false, failingSince: null, lastError: null, lastLeaseAt: null };
  const reportDown = createThrottledLog(
    log,
    'warn',
    'relay pull failing; the door serves, pulling again with backoff',
    {
      intervalMs: options.logEveryMs ?? 60_000,
      now: clock.now,
    },
  );
  const halt = new AbortController();
  let failures = 0;
  let running: Promise<void> = Promise.resolve();

  const failed = async (why: string, retryAfterMs: number | undefined): Promise<void> => {
    failures++;
    status.failingSince ??= clock.now();
    status.lastError = why;
    const delayMs = pullRetryDelayMs(failures, retryAfterMs, deps.random, options.retryMaxMs);
    reportDown({ error: why, failures, retryInMs: delayMs });
    await clock.sleep(delayMs, halt.signal).catch(() => undefined);
  };
  const recovered = (): void => {
    if (failures > 0) log.info('relay pull works again', { failures });
    failures = 0;
    status.failingSince = null;
    status.lastError = null;
  };
  const setUp = (up: boolean): void => {
    if (status.relayUp !== up) deps.observer?.relayUp(up);
    status.relayUp = up;
  };

  /** The acknowledgement in flight: one at a time, beside the next batch going through the door. */
  let acking: Promise<void> = Promise.resolve();
  const acknowledge = (leaseId: string, ids: string[], refused: RelayRefusal[]): void => {
    const previous = acking;
    acking = (async () => {
      await previous;
      // At shutdown the acknowledgement still goes, for a short while: what it names is committed.
      const signal = halt.signal.aborted ? AbortSignal.timeout(options.stopAckMs ?? 5000) : halt.signal;
      try {
        await client.ack({ leaseId, ids, refused }, signal);
      } catch (error) {
        // Harmless: the relay offers them again after the lease, and this door's ledger removes them.
        log.warn('relay acknowledgement failed; the relay offers the batch again after its lease', {
          error: (error as Error).message,
          requests: ids.length + refused.length,
        });
      }
    })();
  };

  /** Passes a batch through the door and sends its acknowledgement off; `false` when any request failed here. */
  const handleBatch = async (leaseId: string, requests: LeasedRelayRequest[]): Promise<boolean> => {
    const results = await mapBounded(requests, options.concurrency, deps.pass);
    const ids: string[] = [];
    const refused: RelayRefusal[] = [];
    let failure: unknown;
    results.forEach((r, i) => {
      deps.observer?.passed(r, requests[i]!.receivedAt);
      if (r.kind === 'done') {
        counts[r.outcome]++;
        ids.push(r.id);
      } else if (r.kind === 'refused') {
        counts.refused++;
        refused.push({ id: r.id, status: r.status, code: r.code, reason: r.reason });
      } else {
        counts.failed++;
        failure ??= r.error;
      }
    });
    if (ids.length > 0 || refused.length > 0) acknowledge(leaseId, ids, refused);
    if (failure === undefined) return true;
    log.warn('relayed requests failed here; the relay offers them again after their lease', {
      failed: requests.length - ids.length - refused.length,
      err: failure,
    });
    return false;
  };

  type Leased = { ok: true; lease: Awaited<ReturnType<RelayClient['lease']>> } | { ok: false; error: unknown };
  const lease = (): Promise<Leased> =>
    client.lease({ waitSeconds: options.waitSeconds, max: options.batchSize }, halt.signal).then(
      (l) => ({ ok: true, lease: l }),
      (error: unknown) => ({ ok: false, error }),
    );

  const loop = async (): Promise<void> => {
    /** The next batch, asked for while this one goes through the door (it waits at the relay meanwhile). */
    let next: Promise<Leased> | null = null;
    while (!halt.signal.aborted) {
      const got = await (next ?? lease());
      next = null;
      if (!got.ok) {
        if (halt.signal.aborted) break;
        setUp(false);
        const hint = (got.error as { retryAfterMs?: unknown }).retryAfterMs;
        await failed((got.error as Error).message, typeof hint === 'number' ? hint : undefined);
        continue;
      }
      setUp(true);
      status.lastLeaseAt = clock.now();
      if (got.lease.requests.length === 0) {
        recovered();
        continue;
      }
      next = lease();
      if (await handleBatch(got.lease.leaseId, got.lease.requests)) recovered();
      // This gateway could not take them (its store, a transform): more at once would only fail too.
      else if (!halt.signal.aborted) await failed('relayed requests failed here (see the log)', undefined);
    }
    // A batch leased as the loop stopped goes back to the relay when its lease ends.
    await next;
    await acking;
  };

  return {
    start() {
      running = loop().catch((error: unknown) => log.error('relay pull loop stopped', { err: error }));
    },
    async stop() {
      halt.abort();
      await running;
    },
    status: () => ({ ...status, counts: { ...counts } }),
  };
}
