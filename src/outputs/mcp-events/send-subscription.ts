import type { Clock } from '../../common/clock.js';
import { linkSignals } from '../../common/link-signals.js';
import type { Log } from '../../common/log.js';
import type { ClaimedSubscription, EventLog, SubscriptionRecord, SubscriptionStore } from '../../store/index.js';
import { controlMessageId, eventBody, gapBody, terminatedBody } from './build-deliveries.js';
import type { WebhookClient, WebhookResult } from './create-webhook-client.js';
import type { Wakeup } from '../../common/create-wakeup.js';
import { deliveryRetryDelayMs } from './delivery-retry.js';
import { RPC } from './mcp-error.js';
import { decodeWebhookSecret, signWebhook } from './sign-webhook.js';
import { statusCategory } from './verify-callback.js';

/** Sees what the sender does (metrics). */
export interface SenderObserver {
  /** An occurrence was answered 2xx, `lagMs` after it was received. */
  delivered(lagMs: number): void;
  /** A try failed; `reason` is its category. */
  failed(reason: string): void;
}

export interface SendDeps {
  store: EventLog & SubscriptionStore;
  client: WebhookClient;
  clock: Clock;
  log: Log;
  wakeup: Wakeup;
  random: () => number;
  /** Aborts when the sender stops: an idle subscription lets go at once. */
  stopping: AbortSignal;
  observer?: SenderObserver;
  /** Longest idle wait without an announcement (a missed notification, an expiry). @default 1000 */
  idleMs?: number;
  /** One delivery's deadline. @default 10000 */
  timeoutMs?: number;
  /** Occurrences read at a time. @default 100 */
  batch?: number;
}

/** Tries at a `terminated` notice before the subscription is deleted without it. */
const NOTICE_ATTEMPTS = 5;
/** The longest a backoff is slept through at once before the subscription is looked at again (a removal, a refresh). */
const BACKOFF_SLICE_MS = 5_000;

/** Sleeps on the clock until `ms` pass or a signal aborts. */
async function sleep(clock: Clock, ms: number, signals: readonly AbortSignal[]): Promise<void> {
  const linked = linkSignals(signals);
  try {
    await clock.sleep(ms, linked.signal).catch(() => undefined);
  } finally {
    linked.dispose();
  }
}

/** What a callback's answer means for the message it was sent. */
type Verdict = 'ok' | 'gone' | 'too_large' | { retry: string; retryAfterMs: number | undefined };

function judge(r: WebhookResult): Verdict {
  if (r.kind === 'failed') return { retry: r.reason, retryAfterMs: undefined };
  if (r.status >= 200 && r.status <= 299) return 'ok';
  // 410: the subscriber is gone for good (the extension's and Standard Webhooks' convention).
  if (r.status === 410) return 'gone';
  // 413 is never worth a retry of the same body (the extension's MUST).
  if (r.status === 413) return 'too_large';
  return { retry: statusCategory(r.status), retryAfterMs: r.retryAfterMs };
}

/** The `error` of a `terminated` notice, by why the subscription ended. */
function termination(reason: string | null): { code: number; message: string; data: Record<string, unknown> } {
  switch (reason) {
    case 'expired':
      return { code: RPC.notFound, message: 'The subscription expired without a refresh.', data: { reason } };
    case 'removed':
      return { code: RPC.forbidden, message: 'An operator removed the subscription.', data: { reason } };
    default:
      return { code: RPC.notFound, message: 'The subscription ended.', data: { reason: reason ?? 'ended' } };
  }
}

/**
 * Sends one claimed subscription's messages, in order, until its claim is lost, the sender stops, or
 * the subscription ends: the occurrences after its cursor up to the log's safe head, each retried
 * with backoff until it is answered 2xx (at least once; one in flight at a time, so in order); a
 * signed `gap` first when retention pruned past the cursor, or when occurrences older than its
 * `maxAgeMs` were skipped; the `terminated` notice once it ends (TTL lapsed, operator removal),
 * then its deletion; a 410 deletes it at once. The cursor is written under the claim after each
 * batch, after a failure and when idle, so a restart or another replica resumes where it was.
 */
export async function sendSubscription(claim: ClaimedSubscription, signal: AbortSignal, deps: SendDeps): Promise<void> {
  const { store, clock, log } = deps;
  const idleMs = deps.idleMs ?? 1000;
  const batch = deps.batch ?? 100;
  const signals = [signal, deps.stopping];
  const active = (): boolean => !signal.aborted && !deps.stopping.aborted;
  let cursor = claim.cursor;
  let attempts = claim.attempts;
  let nextAttemptAt = claim.nextAttemptAt;
  let lastError = claim.lastError;
  let delivered = 0;
  let lastDeliveryAt: number | undefined;
  let dirty = false;
  let held = true;

  /** Writes the progress under the claim; `false` when the claim is no longer this sender's. */
  const flush = async (): Promise<boolean> => {
    if (!dirty) return held;
    dirty = false;
    const progress = {
      id: claim.id,
      claimId: claim.claimId,
      cursor,
      delivered,
      attempts,
      nextAttemptAt,
      lastError,
      ...(lastDeliveryAt === undefined ? {} : { lastDeliveryAt }),
      at: clock.now(),
    };
    delivered = 0;
    lastDeliveryAt = undefined;
    held = await store.recordSubscriptionProgress(progress);
    return held;
  };
  /** The signing key, decoded once per secret (a refresh may replace it). */
  let keyOf: { secret: string; key: Buffer } | null = null;
  const post = (sub: SubscriptionRecord, messageId: string, body: string): Promise<WebhookResult> => {
    if (keyOf?.secret !== sub.secret) {
      const decoded = decodeWebhookSecret(sub.secret);
      if (decoded === null) throw new Error(`subscription ${sub.id} holds no usable secret`);
      keyOf = { secret: sub.secret, key: decoded };
    }
    const key = keyOf.key;
    return deps.client.post({
      url: sub.url,
      headers: signWebhook({ key, messageId, subscriptionId: sub.id, body, nowMs: clock.now() }),
      body,
      signal,
      timeoutMs: deps.timeoutMs ?? 10_000,
    });
  };
  const succeeded = (): void => {
    if (attempts > 0) log.info('subscription delivering again', { subscription: claim.id, after: attempts });
    attempts = 0;
    lastError = null;
    nextAttemptAt = 0;
    dirty = true;
  };
  const failed = async (reason: string, retryAfterMs: number | undefined): Promise<void> => {
    attempts++;
    lastError = reason;
    nextAttemptAt = clock.now() + deliveryRetryDelayMs(attempts, retryAfterMs, deps.random);
    dirty = true;
    deps.observer?.failed(reason);
    if (attempts === 1) log.warn('subscription delivery failed; retrying', { subscription: claim.id, reason });
    await flush();
  };
  /** Sends a control message; `true` once it was answered 2xx. A 410 deletes the subscription. */
  const control = async (
    sub: SubscriptionRecord,
    type: string,
    body: string,
    detail: string,
  ): Promise<boolean | 'gone'> => {
    const verdict = judge(await post(sub, controlMessageId(type, sub.id, detail), body));
    if (verdict === 'gone') return 'gone';
    if (verdict === 'ok' || verdict === 'too_large') return true;
    await failed(verdict.retry, verdict.retryAfterMs);
    return false;
  };
  const gone = async (sub: SubscriptionRecord): Promise<void> => {
    log.info('subscription ended: its callback answered 410', { subscription: sub.id });
    await store.deleteSubscription(sub.id);
    held = false;
  };

  try {
    while (active()) {
      const generation = deps.wakeup.generation();
      const sub = await store.getSubscription(claim.id);
      // Deleted (unsubscribed, removed, gone), or replaced by a new subscription with the same key.
      if (sub === null || sub.state === 'activating' || sub.createdAt !== claim.createdAt) {
        held = false;
        return;
      }
      const now = clock.now();
      if (sub.state === 'active' && sub.expiresAt !== null && sub.expiresAt <= now) {
        log.info('subscription expired without a refresh', { subscription: sub.id });
        await store.terminateSubscription(sub.id, 'expired', now);
        continue;
      }
      if (nextAttemptAt > now) {
        await sleep(clock, Math.min(nextAttemptAt - now, BACKOFF_SLICE_MS), signals);
        continue;
      }
      if (sub.state === 'terminated') {
        const sent = await control(sub, 'terminated', terminatedBody(termination(sub.endReason)), sub.endReason ?? '');
        if (sent === false && attempts < NOTICE_ATTEMPTS) continue;
        await store.finishSubscription(claim);
        held = false;
        return;
      }
      const position = await store.readLogPosition();
      if (cursor < position.prunedThrough) {
        const sent = await control(sub, 'gap', gapBody(position.prunedThrough), String(position.prunedThrough));
        if (sent === 'gone') return await gone(sub);
        if (sent) {
          log.warn('subscription fell behind retention; sent a gap', { subscription: sub.id, from: cursor });
          cursor = position.prunedThrough;
          succeeded();
          await flush();
        }
        continue;
      }
      const args = JSON.parse(sub.argumentsJson) as { agentId?: string };
      const events = await store.readLogEvents({
        name: sub.name,
        after: cursor,
        through: position.head,
        limit: batch,
        ...(args.agentId === undefined ? {} : { agentId: args.agentId }),
      });
      if (events.length === 0) {
        // Quiet: nothing of this subscription up to the head, so its position moves there.
        if (position.head > cursor) {
          cursor = position.head;
          dirty = true;
        }
        if (!(await flush())) return;
        const untilExpiry = sub.expiresAt === null ? idleMs : Math.max(0, sub.expiresAt - now);
        await deps.wakeup.wait(generation, Math.min(idleMs, untilExpiry), signals);
        continue;
      }
      let skippedThrough: number | null = null;
      const sendGap = async (): Promise<boolean> => {
        if (skippedThrough === null) return true;
        const sent = await control(sub, 'gap', gapBody(skippedThrough), String(skippedThrough));
        if (sent === 'gone') {
          await gone(sub);
          return false;
        }
        if (!sent) return false;
        log.info('skipped occurrences older than maxAgeMs; sent a gap', {
          subscription: sub.id,
          through: skippedThrough,
        });
        cursor = skippedThrough;
        skippedThrough = null;
        succeeded();
        return true;
      };
      for (const e of events) {
        if (!active()) break;
        if (sub.maxAgeMs !== null && e.createdAt < clock.now() - sub.maxAgeMs) {
          skippedThrough = e.seq;
          continue;
        }
        if (!(await sendGap())) break;
        const verdict = judge(await post(sub, e.id, eventBody(e)));
        if (verdict === 'gone') return await gone(sub);
        if (verdict === 'ok' || verdict === 'too_large') {
          if (verdict === 'too_large')
            log.warn('callback refused an occurrence as too large (413); skipped', {
              subscription: sub.id,
              eventId: e.id,
            });
          else {
            delivered++;
            lastDeliveryAt = clock.now();
            deps.observer?.delivered(lastDeliveryAt - e.createdAt);
          }
          cursor = e.seq;
          succeeded();
          continue;
        }
        await failed(verdict.retry, verdict.retryAfterMs);
        break;
      }
      if (attempts === 0 && active() && !(await sendGap())) continue;
      if (!(await flush())) return;
    }
  } finally {
    if (held) {
      await flush().catch(() => undefined);
      // Handed back at once, so another replica (or this one, restarted) need not wait out the lease.
      if (held) await store.releaseSubscription(claim).catch(() => undefined);
    }
  }
}
