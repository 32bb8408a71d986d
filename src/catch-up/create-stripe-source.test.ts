import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createFakeStripeApi, type FakeStripeApi } from '../../test/fakes/fake-stripe-api.js';
import { createStripeSource } from './create-stripe-source.js';

const KEY = 'sk_test_sourceTestKey';
const config = (apiBaseUrl: string, o: Record<string, unknown> = {}) => ({
  provider: 'stripe' as const,
  tokenEnv: 'K',
  missedOnly: true,
  apiBaseUrl,
  every: 0 as const,
  maxEvents: 1000,
  ...o,
});
const signal = new AbortController().signal;

describe('the Stripe events source', () => {
  let api: FakeStripeApi;
  let endpoint: Server;
  let up = true;
  before(async () => {
    endpoint = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(up ? 200 : 503);
        res.end();
      });
    });
    await new Promise<void>((r) => endpoint.listen(0, '127.0.0.1', r));
    const port = (endpoint.address() as AddressInfo).port;
    api = await createFakeStripeApi({ apiKey: KEY, secret: 'whsec_x', target: () => `http://127.0.0.1:${port}/` });
  });
  after(async () => {
    await api.close();
    await new Promise((r) => endpoint.close(r));
  });

  it('lists the events Stripe has not delivered, over pages, oldest first, whole', async () => {
    const from = Date.now() - 1000;
    up = true;
    await api.emit('invoice.paid', { n: 'delivered' });
    up = false;
    for (let n = 0; n < 205; n++) await api.emit('invoice.paid', { n });
    const listing = await createStripeSource(config(api.url), KEY).list(from, 1000, signal);
    assert.equal(listing.refs.length, 205);
    assert.deepEqual(
      listing.refs.map((r) => r.id),
      api.events.slice(-205).map((e) => e.id),
      'in the order Stripe made them',
    );
    const pages = api.requests.filter((r) => r.path.startsWith('/v1/events'));
    assert.equal(pages.length, 3);
    const req = await createStripeSource(config(api.url), KEY).load(listing.refs[0]!, signal);
    assert.deepEqual(req.payload, api.events.at(-205));
    assert.equal(req.headers['content-type'], 'application/json; charset=utf-8');
  });

  it('asks for the configured types only, and for every event with missedOnly: false', async () => {
    const from = Date.now() - 1000;
    up = true;
    await api.emit('customer.created', {});
    await api.emit('invoice.paid', {});
    const all = await createStripeSource(config(api.url, { missedOnly: false, types: ['customer.created'] }), KEY).list(
      from,
      1000,
      signal,
    );
    assert.deepEqual(
      all.refs.map((r) => (r.event as { type: string }).type),
      ['customer.created'],
    );
    const q = new URL(api.requests.at(-1)!.path, 'http://x').searchParams;
    assert.deepEqual(q.getAll('types[]'), ['customer.created']);
    assert.equal(q.get('delivery_success'), null);
  });

  it('fails with Stripe’s reason and never the key', async () => {
    await assert.rejects(createStripeSource(config(api.url), 'sk_test_wrong').list(0, 10, signal), (e: Error) => {
      assert.match(e.message, /^GET \/v1\/events: HTTP 401 \(Invalid API Key provided/);
      assert.doesNotMatch(e.message, /sk_test_wrong/);
      return true;
    });
  });
});
