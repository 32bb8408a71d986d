import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { createLog } from '../common/log.js';
import { createHttpServer } from './create-http-server.js';

/** Opens a connection from `from` and waits until it is established. */
const open = async (port: number, from: string, sockets: Socket[]): Promise<Socket> => {
  const s = connect({ host: '127.0.0.1', port, localAddress: from });
  s.on('error', () => undefined);
  await new Promise<void>((resolve, reject) => s.once('connect', resolve).once('error', reject));
  sockets.push(s);
  return s;
};

/** Sends one request on `s` and reads what comes back until the server closes it or the answer is whole. */
const exchange = (s: Socket, path = '/'): Promise<string> =>
  new Promise((resolve) => {
    let text = '';
    s.on('data', (c: Buffer) => {
      text += c.toString();
      if (/\r\n\r\n[\s\S]*(ok|\})$/.test(text)) resolve(text);
    });
    s.on('close', () => resolve(text));
    s.write(`GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`);
  });

describe('createHttpServer', () => {
  it('survives an accept failure (out of file descriptors) and logs it once per interval', async () => {
    const lines: Array<Record<string, unknown>> = [];
    const server = createHttpServer((_req, res) => res.end(), {
      bodyTimeoutMs: 1000,
      log: createLog({ level: 'debug', write: (l) => lines.push(JSON.parse(l) as Record<string, unknown>) }),
      now: () => 5_000,
    });
    await server.listen(0, '127.0.0.1');
    try {
      // What `net` emits when libuv reports a failed accept(2) (only once its reserve descriptor is
      // lost: see the server); without a listener this would throw and end the process.
      for (let i = 0; i < 3; i++) {
        server.server.emit('error', Object.assign(new Error('accept EMFILE'), { code: 'EMFILE', syscall: 'accept' }));
      }
      assert.deepEqual(
        lines.map((l) => [l['msg'], l['code']]),
        [['accepting a connection failed', 'EMFILE']],
      );
      assert.equal(server.server.listening, true);
    } finally {
      await server.close();
    }
  });

  it('answers 408 headers_timeout to headers sent a byte at a time past headersTimeout, within a second or two of it', async () => {
    const server = createHttpServer((_req, res) => res.end('never'), { bodyTimeoutMs: 1000, headersTimeoutMs: 1500 });
    const port = await server.listen(0, '127.0.0.1');
    const slow = connect({ host: '127.0.0.1', port });
    slow.on('error', () => undefined);
    const header = `POST /hooks/wake HTTP/1.1\r\nHost: x\r\nX-Slow: ${'a'.repeat(100)}`;
    let sent = 0;
    const drip = setInterval(() => {
      if (sent < header.length) slow.write(header[sent++]!);
    }, 200);
    try {
      const started = Date.now();
      let answer = '';
      slow.on('data', (chunk: Buffer) => (answer += chunk.toString()));
      const closedAfter = await new Promise<number>((resolve) => {
        slow.on('close', () => resolve(Date.now() - started));
        setTimeout(() => resolve(-1), 10_000).unref();
      });
      assert.ok(
        closedAfter >= 1400 && closedAfter < 4500,
        `closed ${closedAfter} ms after the first byte (-1: still open after 10 s)`,
      );
      assert.match(answer, /^HTTP\/1\.1 408 /);
      assert.match(answer, /"code":"headers_timeout"/);
    } finally {
      clearInterval(drip);
      slow.destroy();
      await server.close();
    }
  });

  it('closes a connection that sends nothing, but not one waiting in silence for its answer', async () => {
    const server = createHttpServer(
      (_req, res) => {
        setTimeout(() => res.end('late'), 600);
      },
      { bodyTimeoutMs: 1000, firstByteTimeoutMs: 200 },
    );
    const port = await server.listen(0, '127.0.0.1');
    try {
      const started = Date.now();
      const silent = connect({ host: '127.0.0.1', port });
      const silentClosed = new Promise<number>((resolve) => {
        silent.on('close', () => resolve(Date.now() - started));
        setTimeout(() => resolve(-1), 3000).unref();
      });
      silent.on('error', () => undefined);
      const waiting = connect({ host: '127.0.0.1', port }, () => {
        waiting.write('GET /slow HTTP/1.1\r\nHost: x\r\n\r\n');
      });
      let answer = '';
      const answered = new Promise<string>((resolve, reject) => {
        waiting.on('data', (chunk: Buffer) => {
          answer += chunk.toString();
          if (answer.endsWith('late')) resolve(answer);
        });
        waiting.on('close', () => reject(new Error(`closed before its answer: ${JSON.stringify(answer)}`)));
      });
      const closedAfter = await silentClosed;
      assert.ok(
        closedAfter >= 150,
        `the silent connection was closed, not before its time (${closedAfter} ms; -1: still open after 3 s)`,
      );
      assert.match(await answered, /^HTTP\/1\.1 200 /);
      waiting.destroy();
    } finally {
      await server.close();
    }
  });

  describe('connections per client', () => {
    /** Runs `body` against a server counting every peer (loopback is uncapped in the gateway itself), then closes all. */
    const withServer = async (
      max: number,
      perClient: number | undefined,
      body: (port: number, sockets: Socket[]) => Promise<void>,
    ): Promise<void> => {
      const server = createHttpServer((_req, res) => res.end('ok'), {
        bodyTimeoutMs: 1000,
        maxConnections: max,
        maxConnectionsPerClient: perClient,
        peerGroup: (peer) => peer ?? null,
      });
      const port = await server.listen(0, '127.0.0.1');
      const sockets: Socket[] = [];
      try {
        await body(port, sockets);
      } finally {
        for (const s of sockets) s.destroy();
        await server.close();
      }
    };
    /**
     * The answer on a new connection from `from`, tried until one is let in: the server learns of
     * a closed socket asynchronously, so a connection racing it may still be refused.
     */
    const servedAgain = async (port: number, from: string, sockets: Socket[]): Promise<string> => {
      let answer = '';
      for (let i = 0; i < 50 && !answer.startsWith('HTTP/1.1 200'); i++)
        answer = await exchange(await open(port, from, sockets));
      return answer;
    };

    it('answers a client past its share 429 too_many_connections and closes it, while another client is served', async () => {
      await withServer(10, 2, async (port, sockets) => {
        await open(port, '127.0.0.1', sockets);
        await open(port, '127.0.0.1', sockets);
        const third = await open(port, '127.0.0.1', sockets);
        const closed = new Promise<void>((resolve) => third.once('close', () => resolve()));
        const refused = await exchange(third);
        assert.match(refused, /^HTTP\/1\.1 429 /);
        assert.match(refused, /\r\nretry-after: 1\r\n/i);
        assert.match(refused, /\r\nconnection: close\r\n/i);
        assert.match(refused, /"code":"too_many_connections"/);
        await closed;
        assert.match(await exchange(await open(port, '127.0.0.2', sockets)), /^HTTP\/1\.1 200 [\s\S]*ok$/);
        // The client's own connections within its share keep working.
        assert.match(await exchange(sockets[0]!), /^HTTP\/1\.1 200 [\s\S]*ok$/);
      });
    });

    it('lets the client in again once one of its connections is gone', async () => {
      await withServer(10, 1, async (port, sockets) => {
        const first = await open(port, '127.0.0.1', sockets);
        assert.match(await exchange(await open(port, '127.0.0.1', sockets)), /^HTTP\/1\.1 429 /);
        first.destroy();
        assert.match(await servedAgain(port, '127.0.0.1', sockets), /^HTTP\/1\.1 200 /);
      });
    });

    it('lets a client alone hold half the free connections, and the next half of what is left', async () => {
      await withServer(8, undefined, async (port, sockets) => {
        const statuses = async (from: string, n: number): Promise<string[]> => {
          const out: string[] = [];
          for (let i = 0; i < n; i++) out.push((await exchange(await open(port, from, sockets))).slice(9, 12));
          return out;
        };
        // Each connection stays open after its answer, so each new one finds the earlier ones counted.
        assert.deepEqual(await statuses('127.0.0.1', 5), ['200', '200', '200', '200', '429']);
        assert.deepEqual(await statuses('127.0.0.2', 3), ['200', '200', '429']);
      });
    });
  });

  describe('at maxConnections', () => {
    /** A server whose requests to `/hold` wait until `release()`, others answered at once. */
    const withServer = async (
      max: number,
      body: (port: number, sockets: Socket[], release: () => void) => Promise<void>,
    ): Promise<void> => {
      const held: Array<() => void> = [];
      const server = createHttpServer(
        (req, res) => {
          if (req.url === '/hold') held.push(() => res.end('ok'));
          else res.end('ok');
        },
        { bodyTimeoutMs: 1000, maxConnections: max },
      );
      const port = await server.listen(0, '127.0.0.1');
      const sockets: Socket[] = [];
      try {
        await body(port, sockets, () => {
          for (const release of held.splice(0)) release();
        });
      } finally {
        for (const s of sockets) s.destroy();
        await server.close();
      }
    };
    const closed = (s: Socket): Promise<void> => new Promise((resolve) => s.once('close', () => resolve()));

    it('closes the oldest connection that has sent no request, to serve a newer one', async () => {
      await withServer(2, async (port, sockets) => {
        const oldest = await open(port, '127.0.0.1', sockets);
        const second = await open(port, '127.0.0.1', sockets);
        const gone = closed(oldest);
        assert.match(await exchange(await open(port, '127.0.0.1', sockets)), /^HTTP\/1\.1 200 [\s\S]*ok$/);
        await gone;
        assert.equal(second.closed, false, 'the newer idle connection stays');
      });
    });

    it('closes one sending its headers slowly before one idle between two requests', async () => {
      await withServer(2, async (port, sockets) => {
        const answered = await open(port, '127.0.0.1', sockets);
        assert.match(await exchange(answered), /^HTTP\/1\.1 200 /);
        const slow = await open(port, '127.0.0.1', sockets);
        slow.write('GET / HTTP/1.1\r\nHost:');
        const gone = closed(slow);
        assert.match(await exchange(await open(port, '127.0.0.1', sockets)), /^HTTP\/1\.1 200 /);
        await gone;
        assert.equal(answered.closed, false);
      });
    });

    it('closes the connection idle longest between requests when none waits for its first', async () => {
      await withServer(1, async (port, sockets) => {
        const answered = await open(port, '127.0.0.1', sockets);
        assert.match(await exchange(answered), /^HTTP\/1\.1 200 /);
        const gone = closed(answered);
        assert.match(await exchange(await open(port, '127.0.0.1', sockets)), /^HTTP\/1\.1 200 /);
        await gone;
      });
    });

    it('answers 503 over_capacity only when every connection has a request in flight', async () => {
      await withServer(2, async (port, sockets, release) => {
        const first = exchange(await open(port, '127.0.0.1', sockets), '/hold');
        const second = exchange(await open(port, '127.0.0.1', sockets), '/hold');
        // Both requests are with the handler before the third connection comes.
        await new Promise((r) => setTimeout(r, 50));
        const refused = await exchange(await open(port, '127.0.0.1', sockets));
        assert.match(refused, /^HTTP\/1\.1 503 [\s\S]*"code":"over_capacity"/);
        release();
        assert.match(await first, /^HTTP\/1\.1 200 /);
        assert.match(await second, /^HTTP\/1\.1 200 /);
      });
    });
  });

  it('still rejects listen when the port is taken', async () => {
    const first = createHttpServer((_req, res) => res.end(), { bodyTimeoutMs: 1000 });
    const port = await first.listen(0, '127.0.0.1');
    const second = createHttpServer((_req, res) => res.end(), { bodyTimeoutMs: 1000 });
    try {
      await assert.rejects(second.listen(port, '127.0.0.1'), /EADDRINUSE/);
    } finally {
      await first.close();
    }
  });
});
