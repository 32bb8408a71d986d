import type { CatchUpConfig } from '../config/index.js';
import { callProvider } from './call-provider.js';
import { CatchUpError, keepOldest, type CatchUpSource, type CaughtUpRef } from './catch-up-source.js';

type StripeCatchUp = Extract<CatchUpConfig, { provider: 'stripe' }>;

/** A Stripe event, kept whole: it is the body Stripe posts to an endpoint. */
interface StripeRef extends CaughtUpRef {
  event: Record<string, unknown>;
}

const PAGE_LIMIT = 100;

/** The headers Stripe sends an endpoint, less the signature (a caught-up event is trusted by the API token). */
const STRIPE_HEADERS = {
  'content-type': 'application/json; charset=utf-8',
  'user-agent': 'Stripe/1.0 (+https://stripe.com/docs/webhooks)',
};

function isEvent(v: unknown): v is Record<string, unknown> & { id: string; created: number } {
  const o = v as { id?: unknown; object?: unknown; created?: unknown } | null;
  return (
    typeof o?.id === 'string' &&
    o.id.startsWith('evt_') &&
    o.object === 'event' &&
    typeof o.created === 'number' &&
    Number.isFinite(o.created)
  );
}

/**
 * Stripe's events list (`GET /v1/events`), newest first, 100 a page, `created[gte]` the window's
 * start, followed by `starting_after` while `has_more`; with `missedOnly`, only events Stripe has
 * not delivered to every endpoint (`delivery_success=false`). Stripe keeps 30 days of events.
 */
export function createStripeSource(c: StripeCatchUp, token: string): CatchUpSource<StripeRef> {
  const base = (c.apiBaseUrl ?? 'https://api.stripe.com').replace(/\/+$/, '');
  const origin = new URL(base).origin;
  const headers = { authorization: `Bearer ${token}`, 'user-agent': 'hookgate-catch-up' };
  return {
    provider: 'stripe',
    async list(fromMs, maxEvents, signal, after = null) {
      const query = new URLSearchParams({
        limit: String(PAGE_LIMIT),
        'created[gte]': String(Math.floor(fromMs / 1000)),
      });
      if (c.missedOnly) query.set('delivery_success', 'false');
      for (const t of c.types ?? []) query.append('types[]', t);
      let kept: StripeRef[] = []; // newest first, as listed
      let listed = 0;
      let startingAfter: string | null = null;
      for (;;) {
        if (startingAfter !== null) query.set('starting_after', startingAfter);
        const answer = await callProvider(origin, `${base}/v1/events?${query}`, { method: 'GET', headers, signal });
        const page = answer.json as { object?: unknown; data?: unknown; has_more?: unknown } | null;
        if (page?.object !== 'list' || !Array.isArray(page.data)) throw new CatchUpError('GET /v1/events: not a list');
        const all = page.data.filter(isEvent);
        // Newest first: what a pass cut short handled is listed from `after` on, and ends the listing.
        const resume = after === null ? -1 : all.findIndex((e) => e.id === after);
        const events = resume === -1 ? all : all.slice(0, resume);
        listed += events.length;
        for (const e of events) kept.push({ id: e.id, at: e.created * 1000, event: e });
        if (resume !== -1) break;
        // Newest first: the oldest seen are the last; the newest beyond what a pass handles are let go.
        if (kept.length > 2 * maxEvents) kept = kept.slice(kept.length - maxEvents);
        const last = page.data.at(-1) as { id?: unknown } | undefined;
        if (page.has_more !== true || typeof last?.id !== 'string') break;
        startingAfter = last.id;
      }
      const oldest = keepOldest(kept, maxEvents);
      return { refs: oldest.kept, listed, truncated: listed > maxEvents };
    },
    async load(ref) {
      return { headers: { ...STRIPE_HEADERS }, payload: ref.event };
    },
  };
}
