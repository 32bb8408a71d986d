import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sendRequest } from './send-request.js';

describe('sendRequest', () => {
  let server: Server;
  let url: string;
  const seen: Array<{ method: string; length: string | undefined; body: string }> = [];
  before(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        seen.push({ method: req.method ?? '', length: req.headers['content-length'], body });
        if (req.url === '/slow') return void setTimeout(() => res.end('late'), 2000);
        res.writeHead(201, { 'retry-after': '3', 'x-multi': ['a', 'b'] });
        res.end(`echo:${body}`);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('sends the body with its length and reads status, headers and text', async () => {
    const res = await sendRequest(`${url}/x`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'héllo', signal: AbortSignal.timeout(5000) });
    assert.equal(res.status, 201);
    assert.equal(res.text, 'echo:héllo');
    assert.equal(res.headers.get('Retry-After'), '3');
    assert.equal(res.headers.get('x-multi'), 'a, b');
    assert.equal(res.headers.get('nope'), null);
    assert.deepEqual(seen.at(-1), { method: 'POST', length: String(Buffer.byteLength('héllo')), body: 'héllo' });
  });

  it('rejects with the signal reason when it aborts', async () => {
    await assert.rejects(sendRequest(`${url}/slow`, { method: 'GET', headers: {}, signal: AbortSignal.timeout(100) }), (e: Error) => e.name === 'TimeoutError');
  });

  it('rejects with the network error when nothing listens', async () => {
    await assert.rejects(sendRequest('http://127.0.0.1:1/', { method: 'GET', headers: {}, signal: AbortSignal.timeout(5000) }), /ECONNREFUSED/);
  });
});
