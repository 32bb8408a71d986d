import { createCoalescedTask } from '../common/create-coalesced-task.js';
import type { Log } from '../common/log.js';
import { computeRetryDelayMs } from '../common/retry.js';
import { keepText, type Scrub } from '../common/scrub-secrets.js';
import type { ChannelsConfig } from '../config/index.js';
import { mainSessionKey } from '../policy/index.js';
import type { DeliveryAttemptResult, DeliveryRecord, NewDelivery, Store } from '../store/index.js';
import { DeliveryError, type ChannelAdapter } from './channel-adapter.js';
import type { DeliveryPort } from './delivery-port.js';
import { resolveRoute } from './resolve-route.js';
import { splitMessage } from './split-message.js';

export interface DeliveryWorkerOptions {
  store: Store;
  log: Log;
  now: () => number;
  random: () => number;
  channels: ChannelsConfig;
  adapters: ReadonlyMap<string, ChannelAdapter>;
  /** Identifies this process's leases. */
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
  /** Applied to a channel's error before it is recorded or logged. @default keepText */
  scrub?: Scrub;
}

/** Why a send failed, as one readable line. */
function reasonOf(error: unknown, scrub: Scrub = keepText): DeliveryError {
  const e = error instanceof DeliveryError ? error : new DeliveryError(`unexpected error: ${(error as Error)?.message ?? String(error)}`, { retryable: false, cause: error });
  // A channel may echo its credential (a bot token in a URL): it never reaches the record or the log.
  const message = scrub(e.message);
  return message === e.message ? e : new DeliveryError(message, {
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
  readonly #o: Required<Omit<DeliveryWorkerOptions, 'store' | 'log' | 'now' | 'random' | 'channels' | 'adapters' | 'owner'>> & DeliveryWorkerOptions;
  readonly #active = new Set<Promise<void>>();
  #stopped = true;
  readonly #pumpOnce = createCoalescedTask(() => this.#pump());
  #poll: NodeJS.Timeout | undefined;
  readonly #wakeups = new Set<NodeJS.Timeout>();

  constructor(options: DeliveryWorkerOptions) {
    this.#o = {
      maxAttempts: 8, maxAgeMs: 3_600_000, backoffBaseMs: 1000, backoffMaxMs: 300_000, timeoutMs: 10_000, pollMs: 1000,
      concurrency: 8, scrub: keepText, ...options,
    };
  }

  deliver(_delivery: NewDelivery): void {
    this.notify();
  }

  start(): void {
    if (!this.#stopped) return;
    this.#stopped = false;
    this.#poll = setInterval(() => this.notify(), this.#o.pollMs);
    this.#poll.unref();
    this.notify();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearInterval(this.#poll);
    for (const t of this.#wakeups) clearTimeout(t);
    this.#wakeups.clear();
    await Promise.allSettled([...this.#active]);
  }

  notify(): void {
    if (!this.#stopped) this.#pumpOnce();
  }

  async #pump(): Promise<void> {
    while (!this.#stopped) {
      const free = this.#o.concurrency - this.#active.size;
      if (free <= 0) return;
      let due: DeliveryRecord[];
      try {
        due = await this.#o.store.claimDueDeliveries({ owner: this.#o.owner, now: this.#o.now(), limit: free, leaseMs: 120_000 });
      } catch (error) {
        this.#o.log.error('claiming deliveries failed', { err: error });
        return;
      }
      if (due.length === 0) return;
      for (const d of due) {
        const p: Promise<void> = this.#process(d)
          .catch((error: unknown) => this.#o.log.error('delivery failed unexpectedly', { deliveryId: d.id, err: error }))
          .finally(() => {
            this.#active.delete(p);
            this.notify();
          });
        this.#active.add(p);
      }
    }
  }

  /** Wakes the worker when a retry falls due (the poll would find it too, later). */
  #wakeAt(at: number): void {
    const t = setTimeout(() => {
      this.#wakeups.delete(t);
      this.notify();
    }, Math.max(0, at - this.#o.now()));
    t.unref();
    this.#wakeups.add(t);
  }

  async #process(d: DeliveryRecord): Promise<void> {
    const { store, log, owner } = this.#o;
    const attempt = d.attempts + 1;
    const base = { owner, deliveryId: d.id, attempt, status: null, resolvedChannel: d.resolvedChannel, resolvedTo: d.resolvedTo, partsSent: d.partsSent, nextAttemptAt: null, lastRoute: null };
    const record = (r: Omit<DeliveryAttemptResult, 'at'>): Promise<boolean> => store.recordDeliveryAttempt({ ...r, at: this.#o.now() });
    const route = resolveRoute(d, await store.getLastRoute(mainSessionKey(d.agentId)), this.#o.channels);
    const adapter = route.ok ? this.#o.adapters.get(route.channel) : undefined;
    if (!route.ok || adapter === undefined) {
      const reason = route.ok ? `channel ${route.channel} has no adapter` : route.reason;
      await record({ ...base, outcome: 'skipped', error: reason });
      log.info('delivery skipped', { deliveryId: d.id, reason });
      return;
    }
    const routed = { ...base, resolvedChannel: route.channel, resolvedTo: route.to };
    const parts = splitMessage(d.text, adapter.maxMessageChars);
    const timeoutMs = this.#o.channels[route.channel]?.timeoutMs ?? this.#o.timeoutMs;
    let sent = d.partsSent;
    try {
      for (; sent < parts.length; sent++) {
        await adapter.send(route.to, parts[sent]!, AbortSignal.timeout(timeoutMs));
        // Each accepted part is recorded, so a retry never sends it again.
        if (sent + 1 < parts.length) await store.recordDeliveryProgress(d.id, owner, sent + 1, route.channel, route.to, this.#o.now());
      }
    } catch (error) {
      const e = reasonOf(error, this.#o.scrub);
      const now = this.#o.now();
      const delay = computeRetryDelayMs(attempt, e.retryAfterMs, this.#o.random, { baseMs: this.#o.backoffBaseMs, maxMs: this.#o.backoffMaxMs });
      const retry = e.retryable && attempt < this.#o.maxAttempts && now + delay - d.createdAt <= this.#o.maxAgeMs;
      const status = e.status ?? null;
      if (retry) {
        await record({ ...routed, partsSent: sent, status, outcome: 'retry', error: e.message, nextAttemptAt: now + delay });
        this.#wakeAt(now + delay);
        log.warn('delivery attempt failed; will retry', { deliveryId: d.id, channel: route.channel, attempt, status, retryInMs: delay });
      } else {
        const why = e.retryable ? `${e.message} (gave up after ${attempt} attempt${attempt === 1 ? '' : 's'})` : e.message;
        await record({ ...routed, partsSent: sent, status, outcome: 'failed', error: why });
        log.warn('delivery failed', { deliveryId: d.id, channel: route.channel, attempt, status, error: why });
      }
      return;
    }
    const lastRoute = route.explicit ? { sessionKey: mainSessionKey(d.agentId), agentId: d.agentId, channel: route.channel, to: route.to } : null;
    await record({ ...routed, partsSent: parts.length, outcome: 'sent', error: null, lastRoute });
    log.info('delivery sent', { deliveryId: d.id, channel: route.channel, parts: parts.length, attempt });
  }
}
