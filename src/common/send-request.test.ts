import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { createServer as createTcpServer, type AddressInfo, type Socket } from 'node:net';
import { createSilentListener, type SilentListener } from '../../test/fakes/create-silent-listener.js';
import { ConnectTimeoutError, sendRequest } from './send-request.js';

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
    const res = await sendRequest(`${url}/x`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: 'héllo',
      signal: AbortSignal.timeout(5000),
    });
    assert.equal(res.status, 201);
    assert.equal(res.text, 'echo:héllo');
    assert.equal(res.headers.get('Retry-After'), '3');
    assert.equal(res.headers.get('x-multi'), 'a, b');
    assert.equal(res.headers.get('nope'), null);
    assert.deepEqual(seen.at(-1), { method: 'POST', length: String(Buffer.byteLength('héllo')), body: 'héllo' });
  });

  it('rejects with the signal reason when it aborts', async () => {
    await assert.rejects(
      sendRequest(`${url}/slow`, { method: 'GET', headers: {}, signal: AbortSignal.timeout(100) }),
      (e: Error) => e.name === 'TimeoutError',
    );
  });

  it('rejects with the network error when nothing listens', async () => {
    await assert.rejects(
      sendRequest('http://127.0.0.1:1/', { method: 'GET', headers: {}, signal: AbortSignal.timeout(5000) }),
      /ECONNREFUSED/,
    );
  });

  describe('connectTimeoutMs', () => {
    let silent: SilentListener;
    before(async () => {
      silent = await createSilentListener();
    });
    after(() => silent.close());

    it('fails a connection not made in time with ETIMEDOUT, long before the signal', async () => {
      const started = Date.now();
      await assert.rejects(
        sendRequest(`http://${silent.host}:${silent.port}/v1`, {
          method: 'POST',
          headers: {},
          body: '{}',
          signal: AbortSignal.timeout(3000),
          connectTimeoutMs: 100,
        }),
        (e: NodeJS.ErrnoException) => {
          assert.ok(e instanceof ConnectTimeoutError, String(e));
          assert.equal(e.code, 'ETIMEDOUT');
          assert.equal(e.syscall, 'connect');
          assert.match(
            e.message,
            new RegExp(`^connect ETIMEDOUT 127\\.0\\.0\\.1:${silent.port} \\(not connected within 100 ms\\)$`),
          );
          return true;
        },
      );
      const elapsed = Date.now() - started;
      assert.ok(elapsed >= 90 && elapsed < 1500, `failed after ${elapsed} ms`);
    });

    it('counts the TLS handshake as part of connecting', async () => {
      // Accepts the TCP connection and never answers the TLS ClientHello.
      const held: Socket[] = [];
      const mute = createTcpServer((socket) => held.push(socket));
      await new Promise<void>((resolve) => mute.listen(0, '127.0.0.1', resolve));
      try {
        const { port } = mute.address() as AddressInfo;
        const started = Date.now();
        await assert.rejects(
          sendRequest(`https://127.0.0.1:${port}/v1`, {
            method: 'POST',
            headers: {},
            body: '{}',
            signal: AbortSignal.timeout(3000),
            connectTimeoutMs: 100,
          }),
          (e: Error) => e instanceof ConnectTimeoutError,
        );
        assert.ok(Date.now() - started < 1500);
      } finally {
        for (const s of held) s.destroy();
        await new Promise<void>((resolve) => mute.close(() => resolve()));
      }
    });

    it('leaves a connected request to the signal, however long its answer takes', async () => {
      // A server of its own, so the request opens a new connection rather than reusing a kept-alive one.
      const late = createServer((_req, res) => void setTimeout(() => res.end('answered'), 300));
      await new Promise<void>((resolve) => late.listen(0, '127.0.0.1', resolve));
      try {
        const { port } = late.address() as AddressInfo;
        const res = await sendRequest(`http://127.0.0.1:${port}/`, {
          method: 'GET',
          headers: {},
          signal: AbortSignal.timeout(5000),
          connectTimeoutMs: 100,
        });
        assert.equal(res.text, 'answered');
      } finally {
        late.closeAllConnections();
        await new Promise<void>((resolve) => late.close(() => resolve()));
      }
    });
  });
});
