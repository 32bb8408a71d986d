/**
 * Ingress bounds end to end: deep JSON is a 400 on every route (the mapped-hook case used to be a
 * 500 from a JSON.stringify overflow), and connections past `gateway.maxConnections` are answered
 * 503 `over_capacity` and closed while the connections within the limit keep working; idle ones past
 * it are held only a few at a time, so a client that sends its request is still answered. One client
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
  const idle: Socket[] = [];
  before(async () => {
    gw = await startTestGateway(
      baseConfig({
        gateway: { bind: '127.0.0.1', port: 0, logLevel: 'warn', maxConnections: 3, metrics: { public: true } },
      }),
    );
  });
  after(async () => {
    for (const s of idle) s.destroy();
    await gw.stop();
  });

  const wake = (): string => {
    const body = JSON.stringify({ text: 'over the limit?', mode: 'next-heartbeat' });
    return (
      `POST /hooks/wake HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${HOOK_TOKEN}\r\n` +
      `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`
    );
  };

  it('answers a connection past the limit 503 over_capacity with Retry-After, then closes it', async () => {
    for (let i = 0; i < 3; i++) {
      const s = connect({ host: '127.0.0.1', port: gw.port });
      await new Promise<void>((resolve, reject) => s.once('connect', resolve).once('error', reject));
      idle.push(s);
    }
    const res = await rawExchange(gw.port, wake());
    assertError(res, 503, 'over_capacity');
    assert.equal(res.headers['retry-after'], '1');
    assert.equal(res.headers['connection'], 'close');
  });

  it('serves new connections again once one of the idle ones is gone', async () => {
    idle.pop()!.destroy();
    let status = 0;
    // The server learns of the closed socket asynchronously; a request racing it may still be refused.
    for (let i = 0; i < 50 && status !== 200; i++) status = (await rawExchange(gw.port, wake())).status;
    assert.equal(status, 200);
  });

  it('keeps serving requests on connections within the limit', async () => {
    const s = idle[0]!;
    const answer = new Promise<string>((resolve) => {
      let text = '';
      s.on('data', (c: Buffer) => {
        text += c.toString();
        if (text.includes('"ok":true')) resolve(text);
      });
    });
    s.write(wake());
    assert.match(await answer, /^HTTP\/1\.1 200 /);
  });

  it('counts the connections turned away and those open in /metrics', async () => {
    let res = await rawExchange(gw.port, 'GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    // Connections of the earlier tests may still be closing as the server sees it.
    for (let i = 0; i < 50 && res.status === 503; i++)
      res = await rawExchange(gw.port, 'GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    assert.equal(res.status, 200, res.text);
    const samples = parseMetrics(res.text);
    assert.ok((metricValue(samples, 'hookgate_connections_refused_total', { reason: 'over_capacity' }) ?? 0) >= 1);
    assert.equal(
      metricValue(samples, 'hookgate_connections_refused_total', { reason: 'too_many_connections' }) ?? 0,
      0,
    );
    // The two idle connections left and the scrape's own.
    assert.equal(metricValue(samples, 'hookgate_connections_open'), 3);
  });
});

describe('ingress: idle connections past gateway.maxConnections', () => {
  it(`holds at most ${OVER_CAPACITY_HELD} of them, closing the oldest, and still answers a request 503 over_capacity`, async () => {
    const gw = await startTestGateway(
      baseConfig({ gateway: { bind: '127.0.0.1', port: 0, logLevel: 'warn', maxConnections: 2 } }),
    );
    const sockets: Socket[] = [];
    let closedByServer = 0;
    try {
      const open = async (): Promise<void> => {
        const s = connect({ host: '127.0.0.1', port: gw.port });
        s.on('close', () => closedByServer++);
        await new Promise<void>((resolve, reject) => s.once('connect', resolve).once('error', reject));
        sockets.push(s);
      };
      for (let i = 0; i < 2 + OVER_CAPACITY_HELD + 10; i++) await open();
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
      assert.equal(sockets[0]!.closed, false, 'a connection within the limit stays open');
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
