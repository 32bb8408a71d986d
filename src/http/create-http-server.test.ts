import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
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
