import type { Clock } from '../../common/clock.js';
import type { EventLog, SubscriptionRecord, SubscriptionStore } from '../../store/index.js';
import { TooManySubscriptionsError } from '../../store/index.js';
import type { AddressAllowance } from './address-policy.js';
import { canonicalJson } from './canonical-json.js';
import { checkCallbackUrl } from './check-callback-url.js';
import type { WebhookClient } from './create-webhook-client.js';
import { encodeCursor } from './cursor.js';
import { findEventDefinition, parseEventArguments, type EventDefinition } from './event-catalog.js';
import { invalidParam, McpError, RPC } from './mcp-error.js';
import { parseMaxAgeMs, resolveStart } from './resolve-start.js';
import { decodeWebhookSecret } from './sign-webhook.js';
import { subscriptionId } from './subscription-id.js';
import { verifyCallback, type VerificationResult } from './verify-callback.js';

/** The lifetime granted when a client suggests none. */
const DEFAULT_TTL_MS = 24 * 60 * 60 * 1000;
/** The shortest lifetime granted: a shorter suggestion is raised to it (a floor against refresh storms). */
const MIN_TTL_MS = 60_000;

interface SubscribeDeps {
  store: EventLog & SubscriptionStore;
  definitions: () => readonly EventDefinition[];
  client: WebhookClient;
  allow: AddressAllowance;
  maxSubscriptions: number;
  clock: Clock;
  /** Verification timeout (tests). */
  verifyTimeoutMs?: number;
  /** The shortest lifetime granted (tests). @default MIN_TTL_MS */
  minTtlMs?: number;
}

/** The granted expiry: `null` (no expiry) only when asked for with `ttlMs: null`. */
function grantExpiry(raw: unknown, now: number, minTtlMs: number): number | null {
  if (raw === null) return null;
  if (raw === undefined) return now + DEFAULT_TTL_MS;
  if (typeof raw !== 'number' || !Number.isSafeInteger(raw) || raw <= 0)
    throw invalidParam('ttlMs', 'must be a positive integer (milliseconds) or null (no expiry)');
  return now + Math.max(minTtlMs, raw);
}

interface Key {
  definition: EventDefinition;
  args: Record<string, unknown>;
  url: URL;
  id: string;
}

function parseKey(deps: Pick<SubscribeDeps, 'definitions' | 'allow'>, params: Record<string, unknown>): Key {
  const definition = findEventDefinition(deps.definitions(), params['name']);
  const args = { ...parseEventArguments(params['arguments']) };
  const delivery = params['delivery'];
  if (delivery === null || typeof delivery !== 'object' || Array.isArray(delivery))
    throw invalidParam('delivery', 'must be an object {mode: "webhook", url, secret}');
  const d = delivery as Record<string, unknown>;
  if (d['mode'] !== undefined && d['mode'] !== 'webhook') {
    throw new McpError(
      RPC.unsupported,
      `Delivery mode ${JSON.stringify(d['mode'])} is not offered by events/subscribe (webhook; poll with events/poll).`,
      {
        feature: 'deliveryMode',
        value: d['mode'],
      },
    );
  }
  const url = checkCallbackUrl(d['url'], deps.allow);
  return { definition, args, url, id: subscriptionId(url.href, definition.name, args) };
}

const callbackError = (r: Exclude<VerificationResult, { ok: true }>): McpError =>
  r.reason === 'address_refused'
    ? invalidParam('delivery.url', `resolves to ${r.address ?? 'an address'} in a range callbacks may not reach`)
    : new McpError(RPC.callbackEndpointError, `The callback did not pass verification (${r.reason}).`, {
        reason: r.reason,
      });

/** `deliveryStatus` for a refresh: whether delivery is going, its last success, its last failure's category. */
const deliveryStatus = (s: SubscriptionRecord) => ({
  active: s.state === 'active' && s.attempts === 0,
  lastDeliveryAt: s.lastDeliveryAt === null ? null : new Date(s.lastDeliveryAt).toISOString(),
  lastError: s.lastError,
});

/**
 * `events/subscribe`: validates every field (each bad one named), derives the subscription's id,
 * and upserts it. A new subscription starts where the cursor says (`resolveStart`), stays
 * `activating` until its callback echoes a signed challenge, and is removed again if it does not;
 * a repeat of a live one refreshes its expiry, secret and `maxAgeMs` and answers with its position
 * (the cursor a quiet subscription's client should keep). Answers `{id, refreshBefore, cursor,
 * truncated}`.
 */
export async function handleSubscribe(
  deps: SubscribeDeps,
  params: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  const key = parseKey(deps, params);
  const secret = (params['delivery'] as Record<string, unknown>)['secret'];
  const signingKey = typeof secret === 'string' ? decodeWebhookSecret(secret) : null;
  if (signingKey === null)
    throw invalidParam('delivery.secret', 'must be "whsec_" followed by base64 of 24 to 64 random bytes');
  const now = deps.clock.now();
  const expiresAt = grantExpiry(params['ttlMs'], now, deps.minTtlMs ?? MIN_TTL_MS);
  const maxAgeMs = parseMaxAgeMs(params['maxAgeMs']);
  const start = await resolveStart(deps.store, {
    cursor: params['cursor'],
    maxAgeMs,
    name: key.definition.name,
    args: key.args,
    now,
  });
  let saved: { subscription: SubscriptionRecord; created: boolean };
  try {
    saved = await deps.store.saveSubscription(
      {
        id: key.id,
        name: key.definition.name,
        argumentsJson: canonicalJson(key.args),
        url: key.url.href,
        secret: secret as string,
        cursor: start.after,
        expiresAt,
        maxAgeMs,
        createdAt: now,
      },
      { maxSubscriptions: deps.maxSubscriptions, now },
    );
  } catch (error) {
    if (!(error instanceof TooManySubscriptionsError)) throw error;
    throw new McpError(
      RPC.resourceExhausted,
      `This gateway holds at most ${error.max} subscriptions (mcp.maxSubscriptions).`,
      {
        limit: 'subscriptions',
        max: error.max,
      },
    );
  }
  const s = saved.subscription;
  if (s.state === 'activating') {
    const verified = await verifyCallback(deps.client, {
      url: s.url,
      subscriptionId: s.id,
      key: signingKey,
      nowMs: deps.clock.now(),
      signal: new AbortController().signal,
      ...(deps.verifyTimeoutMs === undefined ? {} : { timeoutMs: deps.verifyTimeoutMs }),
    });
    if (!verified.ok) {
      await deps.store.deleteSubscription(s.id);
      throw callbackError(verified);
    }
    // Announced by the store: a sender, here or on another replica, takes it at once.
    await deps.store.activateSubscription(s.id, deps.clock.now());
  }
  return {
    id: s.id,
    refreshBefore: expiresAt === null ? null : new Date(expiresAt).toISOString(),
    cursor: encodeCursor(saved.created ? start.after : s.cursor),
    truncated: saved.created ? start.truncated : false,
    ...(saved.created ? {} : { deliveryStatus: deliveryStatus(s) }),
  };
}

/** `events/unsubscribe {name, arguments, delivery: {url}}`: the same key as subscribe; deleted at once. */
export async function handleUnsubscribe(
  deps: Pick<SubscribeDeps, 'store' | 'definitions' | 'allow'>,
  params: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  const key = parseKey(deps, params);
  if (!(await deps.store.deleteSubscription(key.id))) {
    throw new McpError(RPC.notFound, 'No subscription matches this name, arguments and delivery.url.', {
      kind: 'subscription',
    });
  }
  return {};
}
