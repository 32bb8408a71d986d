import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { createLog } from '../common/log.js';
import { createHttpServer } from './create-http-server.js';

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
      // What `net` emits when accept(2) fails; without a listener this would throw and end the process.
      for (let i = 0; i < 3; i++) {
        server.server.emit('error', Object.assign(new Error('accept EMFILE'), { code: 'EMFILE', syscall: 'accept' }));
      }
      assert.deepEqual(lines.map((l) => [l['msg'], l['code']]), [['accepting a connection failed', 'EMFILE']]);
      assert.equal(server.server.listening, true);
    } finally {
      await server.close();
    }
  });

  it('closes a connection that sends nothing, but not one waiting in silence for its answer', async () => {
    const server = createHttpServer((_req, res) => {
      setTimeout(() => res.end('late'), 600);
    }, { bodyTimeoutMs: 1000, firstRequestTimeoutMs: 200 });
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
      assert.ok(closedAfter >= 150, `the silent connection was closed, not before its time (${closedAfter} ms; -1: still open after 3 s)`);
      assert.match(await answered, /^HTTP\/1\.1 200 /);
      waiting.destroy();
    } finally {
      await server.close();
    }
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
