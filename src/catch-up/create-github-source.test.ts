import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createFakeGithubApi, type FakeGithubApi } from '../../test/fakes/fake-github-api.js';
import { createGithubSource, parseDeliveries } from './create-github-source.js';

const TOKEN = 'ghp_sourceTestToken';
const config = (apiBaseUrl: string, o: Record<string, unknown> = {}) => ({
  provider: 'github' as const,
  repo: 'octo/hello',
  hookId: 9,
  tokenEnv: 'T',
  redeliver: false,
  apiBaseUrl,
  every: 0 as const,
  maxEvents: 1000,
  ...o,
});
const signal = new AbortController().signal;

describe('parseDeliveries', () => {
  it('keeps a delivery id past 2^53 exactly, as digits', () => {
    const items = parseDeliveries('[{"id": 12077215967123456789, "guid": "g", "repository_id": 42}]');
    assert.deepEqual(items, [{ id: '12077215967123456789', guid: 'g', repository_id: 42 }]);
  });
});

describe('the GitHub deliveries source', () => {
  let api: FakeGithubApi;
  let receiver: Server;
  /** What the receiver answers each delivery with, in turn. */
  const answers: number[] = [];
  before(async () => {
    receiver = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(answers.shift() ?? 200);
        res.end();
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    const port = (receiver.address() as AddressInfo).port;
    api = await createFakeGithubApi({
      token: TOKEN,
      repo: 'octo/hello',
      hookId: 9,
      secret: 's',
      target: () => `http://127.0.0.1:${port}/hooks/github`,
    });
  });
  after(async () => {
    await api.close();
    await new Promise((r) => receiver.close(r));
  });

  it('lists over pages the deliveries no attempt got through, oldest first, and reads each one’s request', async () => {
    const from = Date.now() - 1000;
    answers.push(...Array.from({ length: 230 }, (_, i) => (i % 2 === 0 ? 503 : 200)));
    for (let n = 0; n < 230; n++) await api.send('push', { n });
    const source = createGithubSource(config(api.url), TOKEN);
    const listing = await source.list(from, 1000, signal);
    assert.equal(listing.listed, 230);
    assert.equal(listing.refs.length, 115, 'the ones answered 503');
    assert.equal(listing.truncated, false);
    const pages = api.calls.filter((c) => c.path === '/repos/octo/hello/hooks/9/deliveries');
    assert.equal(pages.length, 3, 'three pages of 100');
    const first = await source.load(listing.refs[0]!, signal);
    assert.deepEqual(first.payload, { n: 0 });
    assert.equal(first.headers['x-github-event'], 'push');
    assert.equal(first.headers['x-github-delivery'], listing.refs[0]!.id);
    assert.match(String(first.headers['x-hub-signature-256']), /^sha256=/);
  });

  it('counts a delivery as arrived once a redelivery of it got through, and redelivers on request', async () => {
    const from = Date.now();
    answers.push(502);
    const d = await api.send('issues', { action: 'opened' });
    const source = createGithubSource(config(api.url), TOKEN);
    const [ref] = (await source.list(from, 1000, signal)).refs;
    assert.equal(ref?.id, d.guid);
    assert.equal(ref?.deliveryId, String(d.id), 'the id exact to the last digit');
    await source.redeliver!(ref!, signal);
    for (let i = 0; i < 100 && api.deliveries.at(-1)?.redelivery !== true; i++)
      await new Promise((r) => setTimeout(r, 10));
    assert.deepEqual((await source.list(from, 1000, signal)).refs, []);
  });

  it('takes the oldest events of a window larger than a pass handles', async () => {
    const from = Date.now();
    answers.push(503, 503, 503);
    const sent = [];
    for (let n = 0; n < 3; n++) sent.push(await api.send('push', { n }));
    const listing = await createGithubSource(config(api.url), TOKEN).list(from, 2, signal);
    assert.deepEqual(
      listing.refs.map((r) => r.id),
      sent.slice(0, 2).map((d) => d.guid),
    );
    assert.equal(listing.truncated, true);
  });

  it('reads an organization’s webhook at its own path', async () => {
    const org = await createFakeGithubApi({
      token: TOKEN,
      org: 'octo-org',
      hookId: 3,
      secret: 's',
      target: () => 'http://127.0.0.1:1/',
    });
    try {
      await org.send('push', {});
      const listing = await createGithubSource(
        config(org.url, { repo: undefined, org: 'octo-org', hookId: 3 }),
        TOKEN,
      ).list(0, 10, signal);
      assert.equal(listing.refs.length, 1, 'a connection refused is missed');
      assert.equal(org.calls[0]?.path, '/orgs/octo-org/hooks/3/deliveries');
    } finally {
      await org.close();
    }
  });

  it('refuses to follow a Link to another origin, so the token goes nowhere else', async () => {
    const evil = createServer((req, res) => {
      req.resume();
      res.writeHead(200, {
        'content-type': 'application/json',
        link: '<http://203.0.113.9/steal?cursor=v1_1>; rel="next"',
      });
      res.end(JSON.stringify([{ id: 2, guid: 'g', delivered_at: new Date().toISOString(), status_code: 502 }]));
    });
    await new Promise<void>((r) => evil.listen(0, '127.0.0.1', r));
    try {
      const url = `http://127.0.0.1:${(evil.address() as AddressInfo).port}`;
      await assert.rejects(createGithubSource(config(url), TOKEN).list(0, 10, signal), /refusing to follow a link off/);
    } finally {
      await new Promise((r) => evil.close(r));
    }
  });

  it('fails with the call and GitHub’s reason, never the token', async () => {
    const error = await createGithubSource(config(api.url), 'a-wrong-token')
      .list(0, 10, signal)
      .then(
        () => null,
        (e: unknown) => e as Error,
      );
    assert.equal(error?.message, 'GET /repos/octo/hello/hooks/9/deliveries: HTTP 401 (Bad credentials)');
  });
});
