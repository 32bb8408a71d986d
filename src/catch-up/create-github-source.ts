import type { IncomingHttpHeaders } from 'node:http';
import type { CatchUpConfig } from '../config/index.js';
import { callProvider } from './call-provider.js';
import { CatchUpError, keepOldest, type CatchUpSource, type CaughtUpRef } from './catch-up-source.js';
import { nextLink } from './parse-link-header.js';

type GithubCatchUp = Extract<CatchUpConfig, { provider: 'github' }>;

/** A missed delivery: its GUID (`X-GitHub-Delivery`, shared by every attempt) and the id of its newest attempt. */
interface GithubRef extends CaughtUpRef {
  /** The newest attempt's id, in decimal: its request is read, or it is redelivered. */
  deliveryId: string;
}

/** One entry of `GET …/hooks/{hook_id}/deliveries` (a "simple webhook delivery"), the fields read. */
interface DeliveryItem {
  /** Decimal digits: see `parseDeliveries`. */
  id: string;
  guid: string;
  delivered_at: string;
  status_code: number;
}

/**
 * A page of deliveries, each id kept as its decimal digits: GitHub's delivery ids outgrew what a
 * JSON number read as a double holds exactly (19 digits), and an id rounded off names another
 * delivery, or none. The list holds flat items, so an `"id":` key is always a delivery's own.
 */
export function parseDeliveries(text: string): unknown {
  return JSON.parse(text.replace(/("id"\s*:\s*)(\d+)/g, '$1"$2"'));
}

const API_VERSION = '2022-11-28';
const PER_PAGE = 100;

/** A 2xx: the gateway took it. */
const delivered = (code: number): boolean => code >= 200 && code <= 299;
/**
 * A 4xx the gateway answered on purpose (a bad signature, no mapping): it was there, and would
 * answer the same. 408 and 429 are the gateway turning a sender away for now, so they count as missed.
 */
const answered = (code: number): boolean => code >= 400 && code <= 499 && code !== 408 && code !== 429;

function isItem(v: unknown): v is DeliveryItem {
  const o = v as Partial<DeliveryItem> | null;
  return (
    typeof o?.id === 'string' &&
    /^\d+$/.test(o.id) &&
    typeof o.guid === 'string' &&
    o.guid !== '' &&
    typeof o.delivered_at === 'string' &&
    Number.isFinite(Date.parse(o.delivered_at)) &&
    typeof o.status_code === 'number'
  );
}

/** Header names as Node gives them (lower case), values as strings. */
function lowerHeaders(raw: unknown): IncomingHttpHeaders {
  const out: IncomingHttpHeaders = {};
  if (raw === null || typeof raw !== 'object') return out;
  for (const [name, value] of Object.entries(raw as Record<string, unknown>)) {
    if (typeof value === 'string') out[name.toLowerCase()] = value;
    else if (typeof value === 'number') out[name.toLowerCase()] = String(value);
  }
  return out;
}

/**
 * GitHub's record of a webhook's deliveries (the repository's or the organization's): pages of 100,
 * newest first, followed through the `Link` header's cursor until the window's start. A delivery is
 * missed when none of its attempts (one GUID, every redelivery included) was taken (2xx) or answered
 * on purpose (a 4xx other than 408 and 429).
 */
export function createGithubSource(c: GithubCatchUp, token: string): CatchUpSource<GithubRef> {
  const base = (c.apiBaseUrl ?? 'https://api.github.com').replace(/\/+$/, '');
  const origin = new URL(base).origin;
  const owner =
    c.repo === undefined
      ? `/orgs/${encodeURIComponent(c.org!)}`
      : `/repos/${c.repo.split('/').map(encodeURIComponent).join('/')}`;
  const hook = `${base}${owner}/hooks/${c.hookId}`;
  const headers = {
    accept: 'application/vnd.github+json',
    authorization: `Bearer ${token}`,
    'x-github-api-version': API_VERSION,
    'user-agent': 'hookgate-catch-up',
  };
  return {
    provider: 'github',
    async list(fromMs, maxEvents, signal, after = null) {
      const byGuid = new Map<string, { at: number; newestId: string; done: boolean }>();
      let url: string | null = `${hook}/deliveries?per_page=${PER_PAGE}`;
      while (url !== null) {
        const page = await callProvider(origin, url, { method: 'GET', headers, signal });
        const items = parseDeliveries(page.text);
        if (!Array.isArray(items)) throw new CatchUpError(`GET ${new URL(url).pathname}: not a list of deliveries`);
        let older = false;
        for (const item of items) {
          if (!isItem(item)) continue;
          const at = Date.parse(item.delivered_at);
          if (at < fromMs) {
            older = true;
            continue;
          }
          const g = byGuid.get(item.guid) ?? { at, newestId: item.id, done: false };
          g.at = Math.min(g.at, at);
          if (BigInt(item.id) > BigInt(g.newestId)) g.newestId = item.id;
          g.done ||= delivered(item.status_code) || answered(item.status_code);
          byGuid.set(item.guid, g);
        }
        // Newest first: a page that reached before the window ends the listing.
        url = older || items.length === 0 ? null : nextLink(page.header('link'));
      }
      const missed = [...byGuid]
        .filter(([, g]) => !g.done)
        .map(([id, g]) => ({ id, at: g.at, deliveryId: g.newestId }));
      const { kept, truncated } = keepOldest(missed, maxEvents, after);
      return { refs: kept, listed: byGuid.size, truncated };
    },
    async load(ref, signal) {
      const answer = await callProvider(origin, `${hook}/deliveries/${ref.deliveryId}`, {
        method: 'GET',
        headers,
        signal,
      });
      const request = (answer.json as { request?: { headers?: unknown; payload?: unknown } } | null)?.request;
      if (request === undefined || request === null) {
        throw new CatchUpError(`GitHub keeps no request for delivery ${ref.deliveryId} (${ref.id})`);
      }
      return { headers: lowerHeaders(request.headers), payload: request.payload ?? null };
    },
    async redeliver(ref, signal) {
      await callProvider(origin, `${hook}/deliveries/${ref.deliveryId}/attempts`, { method: 'POST', headers, signal });
    },
  };
}
