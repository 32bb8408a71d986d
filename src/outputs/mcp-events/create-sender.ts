import type { Clock } from '../../common/clock.js';
import { createClaimLoop, type ClaimLoop } from '../../common/create-claim-loop.js';
import type { Log } from '../../common/log.js';
import type { ClaimedSubscription, EventLog, SubscriptionStore, WorkSignals } from '../../store/index.js';
import type { WebhookClient } from './create-webhook-client.js';
import { createWakeup } from '../../common/create-wakeup.js';
import { sendSubscription, type SendDeps, type SenderObserver } from './send-subscription.js';

interface SenderOptions {
  store: EventLog & SubscriptionStore & WorkSignals;
  client: WebhookClient;
  clock: Clock;
  log: Log;
  /** `pid:uuid`, for operators. */
  owner: string;
  /** A claim's lease (`store.leaseSeconds`). */
  leaseMs: number;
  /** Subscriptions one process sends at once (`mcp.maxSubscriptions`). */
  concurrency: number;
  random?: () => number;
  observer?: SenderObserver;
  /** How often to look for subscriptions nobody announced. @default 1000 */
  pollMs?: number;
  /** Tuning of each subscription's sender (tests). */
  send?: Partial<Pick<SendDeps, 'idleMs' | 'timeoutMs' | 'batch'>>;
}

/** The MCP Events webhook sender: a consumer of the event log with a position per subscription. */
export interface Sender {
  start(): void;
  /** Lets each subscription finish the delivery in flight, writes its position and hands it back. */
  stop(): Promise<void>;
  /** Whether the loop makes progress (readiness). */
  isAlive(): boolean;
}

/** How long `stop` waits for deliveries in flight before aborting them (they are sent again later). */
const STOP_GRACE_MS = 5_000;

/**
 * Subscriptions are leased work on the house's one claim loop: each claimed subscription is held
 * (its lease renewed) and sent by one long-lived task until it ends or the claim is lost, so on a
 * fleet exactly one replica sends a subscription's occurrences, in order, and another takes over
 * when that one dies (its lease lapses) or stops (it hands the claim back). The store's work
 * signals wake the tasks after each commit of occurrences, in this process or, on PostgreSQL, any
 * (LISTEN/NOTIFY), and the loop after a subscription became active or ended.
 */
export function createSender(o: SenderOptions): Sender {
  const wakeup = createWakeup(o.clock);
  const stopping = new AbortController();
  const deps: SendDeps = {
    store: o.store,
    client: o.client,
    clock: o.clock,
    log: o.log,
    wakeup,
    random: o.random ?? Math.random,
    stopping: stopping.signal,
    ...(o.observer === undefined ? {} : { observer: o.observer }),
    ...o.send,
  };
  const loop: ClaimLoop = createClaimLoop<ClaimedSubscription>({
    name: 'subscriptions',
    claim: (limit) => o.store.claimSubscriptions({ owner: o.owner, limit, leaseMs: o.leaseMs }),
    execute: (claim, signal) => sendSubscription(claim, signal, deps),
    renew: (claims) => o.store.renewSubscriptions(claims, o.leaseMs),
    concurrency: o.concurrency,
    pollMs: o.pollMs ?? 1000,
    renewEveryMs: Math.max(100, Math.floor(o.leaseMs / 3)),
    stopGraceMs: STOP_GRACE_MS,
    clock: o.clock,
    log: o.log,
  });
  let unsubscribe = (): void => undefined;
  return {
    start() {
      unsubscribe = o.store.subscribe((signal) => {
        if (signal.kind === 'published') wakeup.notify();
        else if (signal.kind === 'subscriptions') {
          loop.notify();
          wakeup.notify();
        }
      });
      loop.start();
    },
    async stop() {
      unsubscribe();
      stopping.abort();
      await loop.stop();
    },
    isAlive: () => loop.isAlive(),
  };
}
