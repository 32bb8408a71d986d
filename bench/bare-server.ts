/**
 * Baseline for the benchmark: the least a webhook receiver can do on `node:http` — check
 * `Authorization: Bearer <token>`, read and JSON.parse the body, answer 200 `{"ok":true}`.
 * No storage, no validation beyond that. Run as a child process by run-bench.ts:
 *   BENCH_PORT=<port> BENCH_TOKEN=<token> node dist/bench/bare-server.js
 * (the token comes through the environment so it does not show up in `ps`).
 */
import { createServer } from 'node:http';

const port = Number(process.env['BENCH_PORT']);
const token = process.env['BENCH_TOKEN'];
if (!Number.isInteger(port) || port <= 0 || token === undefined || token === '') {
  process.stderr.write('bare-server: BENCH_PORT and BENCH_TOKEN are required\n');
  process.exit(2);
}

const expected = `Bearer ${token}`;
const OK = '{"ok":true}';
const JSON_HEADERS = { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(OK) };

const server = createServer((req, res) => {
  // Same readiness probe as the gateway, so the driver can wait on both the same way.
  if (req.url === '/healthz') {
    res.writeHead(200, JSON_HEADERS);
    res.end(OK);
    return;
  }
  if (req.headers.authorization !== expected) {
    res.writeHead(401, { 'content-length': 0 });
    res.end();
    req.resume();
    return;
  }
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    try {
      JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      res.writeHead(400, { 'content-length': 0 });
      res.end();
      return;
    }
    res.writeHead(200, JSON_HEADERS);
    res.end(OK);
  });
});

server.listen(port, '127.0.0.1');

const stop = (): void => {
  server.close(() => process.exit(0));
  server.closeIdleConnections();
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
