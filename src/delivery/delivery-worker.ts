import type { Clock } from '../common/clock.js';
import { createClaimLoop, type ClaimLoop } from '../common/create-claim-loop.js';
import type { Log } from '../common/log.js';
import { computeRetryDelayMs } from '../common/retry.js';
import { retryWhile } from '../common/retry-while.js';
import { keepText, type Scrub } from '../common/scrub-secrets.js';
import type { ChannelsConfig, DeliveryConfig } from '../config/index.js';
import { mainSessionKey } from '../policy/index.js';
import {
  isStoreUnavailable,
  type ClaimedDelivery,
  type DeliveryAttemptResult,
  type NewDelivery,
  type Store,
} from '../store/index.js';
import { DeliveryError, type ChannelAdapter } from './channel-adapter.js';
import type { DeliveryPort } from './delivery-port.js';
import { guardReply } from './guard-reply.js';
import { resolveRoute } from './resolve-route.js';
import { splitMessage } from './split-message.js';

export interface DeliveryWorkerOptions {
  store: Pick<
    Store,
    'claimDueDeliveries' | 'renewDeliveries' | 'recordDeliveryProgress' | 'recordDeliveryAttempt' | 'getLastRoute'
  >;
  log: Log;
  clock: Clock;
  random: () => number;
  channels: ChannelsConfig;
  adapters: ReadonlyMap<string, ChannelAdapter>;
  /** The exfiltration guard's settings, read at every delivery (a reload swaps them in place). @default no host allowed */
  guard?: Pick<DeliveryConfig, 'allowedLinkHosts'>;
  /** Identifies this process's claims, for operators. */
  owner: string;
  /** Attempts before a delivery fails for good. @default 8 */
  maxAttempts?: number;
  /** A delivery older than this is not retried again. @default 3600000 (1 h) */
  maxAgeMs?: number;
  /** First backoff step; doubles each attempt, with jitter. @default 1000 */
  backoffBaseMs?: number;
  /** Cap on one backoff step. @default 300000 */
  backoffMaxMs?: number;
  /** Per-call timeout when the channel sets no `timeoutMs`. @default 10000 */
  timeoutMs?: number;
  /** How often to look for due deliveries (retries, `hookgate retry`, other processes). @default 1000 */
  pollMs?: number;
  /** Deliveries sent at once. @default 8 */
  concurrency?: number;
  /** Lease on a claimed delivery, renewed every third of it while it is being sent. @default 30000 */
  leaseMs?: number;
  /** Applied to a channel's error before it is recorded or logged. @default keepText */
  scrub?: Scrub;
  /** Retry wake-ups waiting at once, at most; past it the poll finds the retries. @default MAX_WAKEUPS */
  maxWakeups?: number;
  /** While it says true nothing new is claimed (this replica drains); sends in flight finish. @default never */
  held?: () => boolean;
}

/** Retry wake-ups waiting at once, at most (see `#wakeAt`). */
export const MAX_WAKEUPS = 1000;

/** Why a send failed, as one readable line. */
function reasonOf(error: unknown, scrub: Scrub = keepText): DeliveryError {
  const e =
    error instanceof DeliveryError
      ? error
      : new DeliveryError(`unexpected error: ${(error as Error)?.message ?? String(error)}`, {
          retryable: false,
          cause: error,
        });
  // A channel may echo its credential (a bot token in a URL): it never reaches the record or the log.
  const message = scrub(e.message);
  return message === e.message
    ? e
    : new DeliveryError(message, {
        retryable: e.retryable,
        cause: e,
        ...(e.status === undefined ? {} : { status: e.status }),
        ...(e.retryAfterMs === undefined ? {} : { retryAfterMs: e.retryAfterMs }),
      });
}

/**
 * Sends pending deliveries through the channel adapters: resolves the route, splits the reply,
 * sends the parts not yet sent, and records every attempt. Retryable failures come back after an
 * exponential, jittered backoff that honours the service's hint, within a bounded number of
 * attempts and age; anything else fails at once, visibly, and can be requeued by hand.
 */
export class DeliveryWorker implements DeliveryPort {
  readonly #o: Required<
    Omit<
      DeliveryWorkerOptions,
      'store' | 'log' | 'clock' | 'random' | 'channels' | 'adapters' | 'owner' | 'held' | 'guard'
    >
  > &
    DeliveryWorkerOptions;
  readonly #loop: ClaimLoop;
  readonly #wakeups = new Set<AbortController>();

  constructor(options: DeliveryWorkerOptions) {
    this.#o = {
      maxAttempts: 8,
      maxAgeMs: 3_600_000,
      backoffBaseMs: 1000,
      backoffMaxMs: 300_000,
      timeoutMs: 10_000,
      pollMs: 1000,
      concurrency: 8,
      leaseMs: 30_000,
      scrub: keepText,
      maxWakeups: MAX_WAKEUPS,
      ...options,
    };
    const { store, owner, leaseMs } = this.#o;
    this.#loop = createClaimLoop<ClaimedDelivery>({
      name: 'deliveries',
      claim: (limit) => store.claimDueDeliveries({ owner, now: this.#o.clock.now(), limit, leaseMs }),
      execute: (d, signal) => this.#process(d, signal),
      renew: (claims) => store.renewDeliveries(claims, leaseMs),
      concurrency: this.#o.concurrency,
      ...(options.held === undefined ? {} : { held: options.held }),
      pollMs: this.#o.pollMs,
      renewEveryMs: Math.max(1, Math.floor(leaseMs / 3)),
      // A send in flight is never cut short: an abort could lose the record of a part the service accepted.
      stopGraceMs: null,
      clock: this.#o.clock,
      log: this.#o.log,
    });
  }

  deliver(_delivery: NewDelivery): void {
    this.notify();
  }

  start(): void {
    this.#loop.start();
  }

  async stop(): Promise<void> {
    for (const w of this.#wakeups) w.abort();
    this.#wakeups.clear();
    await this.#loop.stop();
  }

  notify(): void {
    this.#loop.notify();
  }

  /** Deliveries being sent by this process now. */
  active(): number {
    return this.#loop.active();
  }

  /** Whether the delivery loop is running and not stalled (readiness). */
  isAlive(): boolean {
    return this.#loop.isAlive();
  }

  /** Retry wake-ups waiting now. */
  get wakeupsWaiting(): number {
    return this.#wakeups.size;
  }

  /**
   * Wakes the worker when a retry falls due (the poll would find it too, up to `pollMs` later). At
   * most `maxWakeups` wait at once: a chat service down with thousands of deliveries retrying
   * would otherwise keep a timer for each; past it the poll alone finds them.
   */
  #wakeAt(at: number): void {
    if (this.#wakeups.size >= this.#o.maxWakeups) return;
    const w = new AbortController();
    this.#wakeups.add(w);
    this.#o.clock
      .sleep(Math.max(0, at - this.#o.clock.now()), w.signal)
      .then(
        () => this.notify(),
        () => undefined,
      )
      .finally(() => this.#wakeups.delete(w));
  }

  /** `lost` aborts when the claim was lost: no further part is sent (the new holder sends them). */
  async #process(d: ClaimedDelivery, lost: AbortSignal): Promise<void> {
    const { store, log } = this.#o;
    const attempt = d.attempts + 1;
    const base = {
      claimId: d.claimId,
      deliveryId: d.id,
      attempt,
      status: null,
      resolvedChannel: d.resolvedChannel,
      resolvedTo: d.resolvedTo,
      partsSent: d.partsSent,
      nextAttemptAt: null,
      lastRoute: null,
    };
    // What a service accepted must reach the record: a store that cannot write for a moment is
    // waited for (while the lease holds the delivery for this worker), not left to resend it later.
    const recorded = <T>(write: () => Promise<T>): Promise<T> =>
      retryWhile(write, { clock: this.#o.clock, retryable: isStoreUnavailable, forMs: this.#o.leaseMs });
    const record = (r: Omit<DeliveryAttemptResult, 'at'>): Promise<boolean> => {
      const at = this.#o.clock.now();
      return recorded(() => store.recordDeliveryAttempt({ ...r, at }));
    };
    const route = resolveRoute(d, await store.getLastRoute(mainSessionKey(d.agentId)), this.#o.channels);
    const adapter = route.ok ? this.#o.adapters.get(route.channel) : undefined;
    if (!route.ok || adapter === undefined) {
      const reason = route.ok ? `channel ${route.channel} has no adapter` : route.reason;
      await record({ ...base, outcome: 'skipped', error: reason });
      log.info('delivery skipped', { deliveryId: d.id, reason });
      return;
    }
    const routed = { ...base, resolvedChannel: route.channel, resolvedTo: route.to };
    // Every reply comes of hook content (a run's, or a heartbeat's over wakes and run summaries):
    // it is guarded before it is split, so a link is never cut in two and then missed.
    const text = guardReply(d.text, { allowedLinkHosts: this.#o.guard?.allowedLinkHosts ?? [] });
    const parts = splitMessage(text, adapter.maxMessageChars);
    const timeoutMs = this.#o.channels[route.channel]?.timeoutMs ?? this.#o.timeoutMs;
    let sent = d.partsSent;
    try {
      for (; sent < parts.length; sent++) {
        if (lost.aborted) {
          log.warn('delivery claim lost; leaving the rest to its new holder', { deliveryId: d.id, partsSent: sent });
          return;
        }
        await adapter.send(route.to, parts[sent]!, AbortSignal.timeout(timeoutMs));
        // Each accepted part is recorded, so a retry never sends it again.
        if (sent + 1 < parts.length) {
          const progress = {
            deliveryId: d.id,
            claimId: d.claimId,
            partsSent: sent + 1,
            resolvedChannel: route.channel,
            resolvedTo: route.to,
            at: this.#o.clock.now(),
          };
          await recorded(() => store.recordDeliveryProgress(progress));
        }
      }
    } catch (error) {
      const e = reasonOf(error, this.#o.scrub);
      const now = this.#o.clock.now();
      const delay = computeRetryDelayMs(attempt, e.retryAfterMs, this.#o.random, {
        baseMs: this.#o.backoffBaseMs,
        maxMs: this.#o.backoffMaxMs,
      });
      const retry = e.retryable && attempt < this.#o.maxAttempts && now + delay - d.createdAt <= this.#o.maxAgeMs;
      const status = e.status ?? null;
      if (retry) {
        await record({
          ...routed,
          partsSent: sent,
          status,
          outcome: 'retry',
          error: e.message,
          nextAttemptAt: now + delay,
        });
        this.#wakeAt(now + delay);
        log.warn('delivery attempt failed; will retry', {
          deliveryId: d.id,
          channel: route.channel,
          attempt,
          status,
          retryInMs: delay,
        });
      } else {
        const why = e.retryable
          ? `${e.message} (gave up after ${attempt} attempt${attempt === 1 ? '' : 's'})`
          : e.message;
        await record({ ...routed, partsSent: sent, status, outcome: 'failed', error: why });
        log.warn('delivery failed', { deliveryId: d.id, channel: route.channel, attempt, status, error: why });
      }
      return;
    }
    const lastRoute = route.explicit
      ? { sessionKey: mainSessionKey(d.agentId), agentId: d.agentId, channel: route.channel, to: route.to }
      : null;
    await record({ ...routed, partsSent: parts.length, outcome: 'sent', error: null, lastRoute });
    log.info('delivery sent', { deliveryId: d.id, channel: route.channel, parts: parts.length, attempt });
  }
}
