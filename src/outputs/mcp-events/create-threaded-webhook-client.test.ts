import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createThreadedWebhookClient } from './create-threaded-webhook-client.js';

describe('webhook client on its own thread', () => {
  const seen: Array<{ headers: Record<string, unknown>; body: string }> = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => {
      body += c.toString();
    });
    req.on('end', () => {
      seen.push({ headers: req.headers, body });
      res.writeHead(req.url === '/busy' ? 503 : 200, { 'retry-after': '7' }).end('{"challenge":"c"}');
    });
  });
  const listening = new Promise<number>((r) =>
    server.listen(0, '127.0.0.1', () => r((server.address() as AddressInfo).port)),
  );
  const open = createThreadedWebhookClient({ allow: { loopback: true, private: false } });
  const strict = createThreadedWebhookClient({ allow: { loopback: false, private: false } });
  after(() => {
    open.close();
    strict.close();
    server.close();
  });
  const post = (client: typeof open, url: string) =>
    client.post({
      url,
      headers: { 'content-type': 'application/json', 'webhook-id': 'w1' },
      body: '{"a":1}',
      signal: new AbortController().signal,
      timeoutMs: 5_000,
    });

  it('posts the body and headers as given and answers with the status, Retry-After and body', async () => {
    const port = await listening;
    const ok = await post(open, `http://127.0.0.1:${port}/hook`);
    assert.deepEqual(ok, { kind: 'answered', status: 200, retryAfterMs: 7_000, body: '{"challenge":"c"}' });
    assert.equal(seen.at(-1)!.body, '{"a":1}');
    assert.equal(seen.at(-1)!.headers['webhook-id'], 'w1');
    const busy = await post(open, `http://127.0.0.1:${port}/busy`);
    assert.equal(busy.kind === 'answered' && busy.status, 503);
  });

  it('refuses, on its thread, a name that resolves to a loopback address when loopback is not allowed', async () => {
    const port = await listening;
    const before = seen.length;
    const r = await post(strict, `http://localhost:${port}/hook`);
    assert.equal(r.kind, 'failed');
    assert.equal(r.kind === 'failed' && r.reason, 'address_refused');
    assert.match(r.kind === 'failed' ? String((r.error as { address?: unknown }).address) : '', /^(127\.0\.0\.1|::1)$/);
    assert.equal(seen.length, before, 'no request reached the server');
  });

  it('reports a refused connection as connection_refused', async () => {
    const r = await post(open, 'http://127.0.0.1:1/hook');
    assert.equal(r.kind === 'failed' && r.reason, 'connection_refused');
  });
});
