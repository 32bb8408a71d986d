/**
 * Ingress bounds end to end: deep JSON is a 400 on every route (the mapped-hook case used to be a
 * 500 from a JSON.stringify overflow); a connection past `gateway.maxConnections` takes the place of
 * the oldest idle one, and only when every connection has a request in flight is it answered 503
 * `over_capacity` and closed (a few held at a time) while the requests in flight are served. One client
 * address past `gateway.maxConnectionsPerClient` is answered 429 `too_many_connections`; loopback
 * peers and trusted proxies are not capped.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { networkInterfaces } from 'node:os';
import { assertError } from '../helpers/assert-response.js';
import { metricValue, parseMetrics } from '../helpers/read-metrics.js';
import { post, rawExchange } from '../helpers/http-client.js';
import { startTestGateway, type TestGateway } from '../helpers/in-process-gateway.js';
import { OVER_CAPACITY_HELD } from '../../src/http/resolve-max-connections.js';
import { baseConfig, HOOK_TOKEN } from '../helpers/temp-config.js';

/** `{"text": ..., "deep": [[[…]]]}` with the array nested `depth` levels. */
function deepBody(depth: number): string {
  return `{"text":"deep payload","message":"deep payload","deep":${'['.repeat(depth)}"bottom"${']'.repeat(depth)}}`;
}

describe('ingress: deep JSON is a 400 everywhere', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startTestGateway(
      baseConfig({
        hooks: {
          enabled: true,
          token: HOOK_TOKEN,
          mappings: [
            // The whole payload rendered into the message: JSON.stringify of everything.
            {
              id: 'templated',
              match: { path: 'templated' },
              action: 'agent',
              messageTemplate: 'Got {{payload}}',
              deliver: false,
              wakeMode: 'next-heartbeat',
            },
            // No template: the default message is the payload as JSON.
            { id: 'plain', match: { path: 'plain' }, action: 'wake', wakeMode: 'next-heartbeat' },
          ],
        },
      }),
    );
  });
  after(() => gw.stop());

  for (const path of ['/hooks/wake', '/hooks/agent', '/hooks/templated', '/hooks/plain']) {
    it(`refuses a 5,000-deep payload at ${path} with 400 json_too_deep`, async () => {
      const res = await post(gw.port, path, deepBody(5000));
      assertError(res, 400, 'json_too_deep');
    });
  }

  it('still accepts a payload nested 90 levels deep on a templated mapping', async () => {
    const res = await post(gw.port, '/hooks/templated', deepBody(90));
    assert.equal(res.status, 202, res.text);
  });

  it('keeps answering after refusing deep payloads', async () => {
    const res = await post(gw.port, '/hooks/wake', { text: 'still here', mode: 'next-heartbeat' });
    assert.equal(res.status, 200, res.text);
  });
});

describe('ingress: gateway.maxConnections', () => {
  let gw: TestGateway;
  /** Connections whose request is with the gateway, its body not sent yet. */
  const inFlight: Socket[] = [];
  before(async () => {
    gw = await startTestGateway(
      baseConfig({
        gateway: { bind: '127.0.0.1', port: 0, logLevel: 'warn', maxConnections: 3, metrics: { public: true } },
      }),
    );
  });
  after(async () => {
    for (const s of inFlight) s.destroy();
    await gw.stop();
  });

  const body = JSON.stringify({ text: 'over the limit?', mode: 'next-heartbeat' });
  const head = (): string =>
    `POST /hooks/wake HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${HOOK_TOKEN}\r\n` +
    `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n`;
  const open = async (): Promise<Socket> => {
    const s = connect({ host: '127.0.0.1', port: gw.port });
    s.on('error', () => undefined);
    await new Promise<void>((resolve, reject) => s.once('connect', resolve).once('error', reject));
    return s;
  };

  it('closes the oldest idle connection to serve a request past the limit', async () => {
    const idle = [await open(), await open(), await open()];
    const oldestClosed = new Promise<void>((resolve) => idle[0]!.once('close', () => resolve()));
    const res = await rawExchange(gw.port, head(), [body]);
    assert.equal(res.status, 200, res.text);
    await oldestClosed;
    assert.equal(idle[2]!.closed, false, 'a newer idle connection stays');
    for (const s of idle) s.destroy();
  });

  it('answers a connection past the limit 503 over_capacity with Retry-After when every one has a request in flight', async () => {
    // Each sends its headers, not its body: its request is with the gateway, reading the body.
    // Connections of the test before that the server still counts are idle: these take their places.
    for (let i = 0; i < 3; i++) {
      const s = await open();
      s.write(head());
      inFlight.push(s);
    }
    await new Promise((r) => setTimeout(r, 50));
    const res = await rawExchange(gw.port, head(), [body]);
    assertError(res, 503, 'over_capacity');
    assert.equal(res.headers['retry-after'], '1');
    assert.equal(res.headers['connection'], 'close');
  });

  it('keeps serving the requests in flight', async () => {
    const s = inFlight[0]!;
    const answer = new Promise<string>((resolve) => {
      let text = '';
      s.on('data', (c: Buffer) => {
        text += c.toString();
        if (text.includes('"ok":true')) resolve(text);
      });
    });
    s.write(body);
    assert.match(await answer, /^HTTP\/1\.1 200 /);
  });

  it('counts the connections turned away, those closed for newer ones and those open in /metrics', async () => {
    // The connection answered is idle between requests now: the scrape takes its place.
    let res = await rawExchange(gw.port, 'GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    for (let i = 0; i < 50 && res.status === 503; i++)
      res = await rawExchange(gw.port, 'GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    assert.equal(res.status, 200, res.text);
    const samples = parseMetrics(res.text);
    assert.ok((metricValue(samples, 'hookgate_connections_refused_total', { reason: 'over_capacity' }) ?? 0) >= 1);
    assert.ok((metricValue(samples, 'hookgate_connections_closed_for_newer_total') ?? 0) >= 1);
    assert.equal(
      metricValue(samples, 'hookgate_connections_refused_total', { reason: 'too_many_connections' }) ?? 0,
      0,
    );
    // The two requests still in flight and the scrape's own.
    assert.equal(metricValue(samples, 'hookgate_connections_open'), 3);
  });
});

describe('ingress: connections past gateway.maxConnections while every one has a request in flight', () => {
  it(`holds at most ${OVER_CAPACITY_HELD} of them, closing the oldest, and still answers a request 503 over_capacity`, async () => {
    const gw = await startTestGateway(
      baseConfig({ gateway: { bind: '127.0.0.1', port: 0, logLevel: 'warn', maxConnections: 2 } }),
    );
    const sockets: Socket[] = [];
    let closedByServer = 0;
    try {
      const open = async (): Promise<Socket> => {
        const s = connect({ host: '127.0.0.1', port: gw.port });
        await new Promise<void>((resolve, reject) => s.once('connect', resolve).once('error', reject));
        sockets.push(s);
        return s;
      };
      // Two requests whose bodies never come: the gateway is full of work in flight.
      for (let i = 0; i < 2; i++) {
        (await open()).write(
          `POST /hooks/wake HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${HOOK_TOKEN}\r\n` +
            'Content-Type: application/json\r\nContent-Length: 10\r\n\r\n',
        );
      }
      await new Promise((r) => setTimeout(r, 50));
      for (let i = 0; i < OVER_CAPACITY_HELD + 10; i++) (await open()).on('close', () => closedByServer++);
      // The server sees each close only once it has accepted the newer connection.
      for (let i = 0; i < 100 && closedByServer < 10; i++) await new Promise((r) => setTimeout(r, 10));
      assert.equal(closedByServer, 10, 'the ten oldest connections past the limit were closed, and only they');
      const body = JSON.stringify({ text: 'one more', mode: 'next-heartbeat' });
      const res = await rawExchange(
        gw.port,
        `POST /hooks/wake HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${HOOK_TOKEN}\r\n` +
          `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
      assertError(res, 503, 'over_capacity');
      assert.equal(sockets[0]!.closed, false, 'a connection with its request in flight stays open');
    } finally {
      for (const s of sockets) s.destroy();
      await gw.stop();
    }
  });
});

describe('ingress: gateway.maxConnectionsPerClient', () => {
  /** An IPv4 address of this machine that is not loopback: a peer the cap applies to. */
  const outside = Object.values(networkInterfaces())
    .flatMap((l) => l ?? [])
    .find((i) => i.family === 'IPv4' && !i.internal)?.address;

  /** Opens a connection to `host` and sends one wake on it: the status it is answered, or 0 when closed unanswered. */
  const wakeOn = async (host: string, port: number, sockets: Socket[]): Promise<number> => {
    const s = connect({ host, port });
    sockets.push(s);
    s.on('error', () => undefined);
    await new Promise<void>((resolve, reject) => s.once('connect', resolve).once('error', reject));
    const body = JSON.stringify({ text: 'one of many', mode: 'next-heartbeat' });
    return new Promise((resolve) => {
      let text = '';
      s.on('data', (c: Buffer) => {
        text += c.toString();
        if (text.includes('}')) resolve(Number(text.slice(9, 12)));
      });
      s.on('close', () => resolve(text === '' ? 0 : Number(text.slice(9, 12))));
      s.write(
        `POST /hooks/wake HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${HOOK_TOKEN}\r\n` +
          `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
    });
  };
  const statuses = async (host: string, port: number, n: number, sockets: Socket[]): Promise<number[]> => {
    const out: number[] = [];
    // One at a time, each connection left open, so each new one finds the earlier ones counted.
    for (let i = 0; i < n; i++) out.push(await wakeOn(host, port, sockets));
    return out;
  };
  const withGateway = async (
    gateway: Record<string, unknown>,
    body: (port: number, sockets: Socket[]) => Promise<void>,
  ): Promise<void> => {
    const gw = await startTestGateway(baseConfig({ gateway: { port: 0, logLevel: 'warn', ...gateway } }));
    const sockets: Socket[] = [];
    try {
      await body(gw.port, sockets);
    } finally {
      for (const s of sockets) s.destroy();
      await gw.stop();
    }
  };

  it('does not cap loopback peers (a local reverse proxy or tunnel carries many clients)', async () => {
    await withGateway({ bind: '127.0.0.1', maxConnectionsPerClient: 1 }, async (port, sockets) => {
      assert.deepEqual(await statuses('127.0.0.1', port, 4, sockets), [200, 200, 200, 200]);
    });
  });

  it('answers one address past its share 429 too_many_connections', {
    skip: outside === undefined && 'this machine has no IPv4 address but loopback to connect from',
  }, async () => {
    await withGateway({ bind: outside!, maxConnectionsPerClient: 2 }, async (port, sockets) => {
      assert.deepEqual(await statuses(outside!, port, 4, sockets), [200, 200, 429, 429]);
    });
  });

  it('does not cap a trusted proxy', {
    skip: outside === undefined && 'this machine has no IPv4 address but loopback to connect from',
  }, async () => {
    await withGateway(
      { bind: outside!, maxConnectionsPerClient: 2, trustedProxies: [`${outside!}/32`] },
      async (port, sockets) => {
        assert.deepEqual(await statuses(outside!, port, 4, sockets), [200, 200, 200, 200]);
      },
    );
  });
});
