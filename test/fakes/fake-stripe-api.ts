import { createHmac, randomBytes } from 'node:crypto';
import { request } from 'node:http';
import {
  createFakeServer,
  type FakeServer,
  type RecordedRequest,
  type ScriptedResponse,
} from './create-fake-server.js';

/** A Stripe event object, as `GET /v1/events` lists it and an endpoint receives it. */
export interface FakeStripeEvent {
  id: string;
  object: 'event';
  api_version: string;
  created: number;
  data: { object: Record<string, unknown>; previous_attributes?: Record<string, unknown> };
  livemode: boolean;
  /** Endpoints that have not yet accepted it: 0 once the webhook endpoint answered 2xx. */
  pending_webhooks: number;
  request: { id: string | null; idempotency_key: string | null };
  type: string;
}

export interface FakeStripeApi extends FakeServer {
  /** Every event, oldest first. */
  events: FakeStripeEvent[];
  /** Creates an event and sends it to the endpoint as Stripe does (signed); resolves with the endpoint's status (0: no connection). */
  emit(type: string, object: Record<string, unknown>): Promise<{ event: FakeStripeEvent; status: number }>;
}

const BASE62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const stripeId = (prefix: string): string => `${prefix}_${[...randomBytes(24)].map((b) => BASE62[b % 62]).join('')}`;

const invalid = (status: number, message: string, param?: string, code?: string): ScriptedResponse => ({
  status,
  body: {
    error: {
      message,
      type: 'invalid_request_error',
      ...(param === undefined ? {} : { param }),
      ...(code === undefined ? {} : { code }),
    },
  },
});

function deliver(url: string, headers: Record<string, string>, body: string): Promise<number> {
  return new Promise((resolve) => {
    const req = request(
      url,
      { method: 'POST', headers: { ...headers, 'content-length': Buffer.byteLength(body) } },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
        res.on('error', () => resolve(0));
      },
    );
    req.setTimeout(10_000, () => req.destroy(new Error('timeout')));
    req.on('error', () => resolve(0));
    req.end(body);
  });
}

/**
 * A fake of Stripe's API for one account with one webhook endpoint: `emit` creates an event and
 * posts it to the endpoint (with `Stripe-Signature`, as Stripe does), and `GET /v1/events` lists
 * the events with Stripe's list shape and parameters: newest first, `limit` 1–100 (default 10),
 * `created[gt|gte|lt|lte]`, `starting_after`/`ending_before`, `type` or `types[]`, and
 * `delivery_success`. Bearer (or Basic) secret-key auth; errors as Stripe writes them.
 */
export async function createFakeStripeApi(options: {
  apiKey: string;
  /** The endpoint's signing secret (`whsec_...`). */
  secret: string;
  /** The endpoint's URL, read at each send. */
  target: () => string;
}): Promise<FakeStripeApi> {
  const events: FakeStripeEvent[] = [];
  const authorized = (auth: string | undefined): boolean => {
    if (auth === `Bearer ${options.apiKey}`) return true;
    const basic = /^Basic (.+)$/.exec(auth ?? '')?.[1];
    return basic !== undefined && Buffer.from(basic, 'base64').toString('utf8').split(':')[0] === options.apiKey;
  };
  const server = await createFakeServer((req: RecordedRequest): ScriptedResponse => {
    if (!authorized(req.headers.authorization)) {
      return invalid(401, `Invalid API Key provided: ${String(req.headers.authorization ?? '').slice(7, 15)}****`);
    }
    const u = new URL(req.path, 'http://fake');
    if (req.method !== 'GET' || u.pathname !== '/v1/events') {
      return invalid(404, `Unrecognized request URL (${req.method}: ${u.pathname}).`);
    }
    const q = u.searchParams;
    const limit = q.has('limit') ? Number(q.get('limit')) : 10;
    if (!Number.isInteger(limit) || limit < 1 || limit > 100) {
      return invalid(400, 'This value must be greater than or equal to 1 and less than or equal to 100.', 'limit');
    }
    const types = q.getAll('types[]');
    if (q.has('type') && types.length > 0) return invalid(400, 'You may pass either `type` or `types`, but not both.');
    if (types.length > 20) return invalid(400, 'You may pass up to 20 types.', 'types');
    let list = [...events].reverse();
    const bound = (key: string, keep: (created: number, v: number) => boolean): void => {
      const raw = q.get(`created[${key}]`);
      if (raw !== null) list = list.filter((e) => keep(e.created, Number(raw)));
    };
    bound('gt', (c, v) => c > v);
    bound('gte', (c, v) => c >= v);
    bound('lt', (c, v) => c < v);
    bound('lte', (c, v) => c <= v);
    const type = q.get('type');
    if (type !== null) {
      const re = new RegExp(`^${type.replace(/[.]/g, '\\.').replace(/\*/g, '.*')}$`);
      list = list.filter((e) => re.test(e.type));
    }
    if (types.length > 0) list = list.filter((e) => types.includes(e.type));
    const success = q.get('delivery_success');
    if (success !== null) list = list.filter((e) => (e.pending_webhooks === 0) === (success === 'true'));
    const after = q.get('starting_after');
    const before = q.get('ending_before');
    for (const [param, id] of [
      ['starting_after', after],
      ['ending_before', before],
    ] as const) {
      if (id !== null && !events.some((e) => e.id === id))
        return invalid(400, `No such event: '${id}'`, param, 'resource_missing');
    }
    if (after !== null) {
      const i = list.findIndex((e) => e.id === after);
      list = i === -1 ? list.filter((e) => e.created < events.find((x) => x.id === after)!.created) : list.slice(i + 1);
    }
    if (before !== null) {
      const i = list.findIndex((e) => e.id === before);
      list = (i === -1 ? list : list.slice(0, i)).slice(-limit);
    }
    return {
      status: 200,
      body: { object: 'list', data: list.slice(0, limit), has_more: list.length > limit, url: '/v1/events' },
    };
  });
  return Object.assign(server, {
    events,
    async emit(type: string, object: Record<string, unknown>) {
      const event: FakeStripeEvent = {
        id: stripeId('evt'),
        object: 'event',
        api_version: '2024-06-20',
        created: Math.floor(Date.now() / 1000),
        data: { object },
        livemode: false,
        pending_webhooks: 1,
        request: { id: stripeId('req'), idempotency_key: null },
        type,
      };
      events.push(event);
      const body = JSON.stringify(event);
      const t = Math.floor(Date.now() / 1000);
      const status = await deliver(
        options.target(),
        {
          'content-type': 'application/json; charset=utf-8',
          'user-agent': 'Stripe/1.0 (+https://stripe.com/docs/webhooks)',
          'stripe-signature': `t=${t},v1=${createHmac('sha256', options.secret).update(`${t}.${body}`).digest('hex')}`,
        },
        body,
      );
      if (status >= 200 && status <= 299) event.pending_webhooks = 0;
      return { event, status };
    },
  });
}
