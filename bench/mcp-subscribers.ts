/**
 * The MCP Events bench's subscribers, in a process of their own so their work does not share the
 * load generator's: `node mcp-subscribers.js N` starts N webhook callbacks on loopback, each with
 * its own `whsec_` secret, which verify every delivery's Standard Webhooks signature, answer the
 * challenge, and record each occurrence's lag (the 2xx's time less the occurrence's timestamp, the
 * moment the gateway received its hook). A control server answers `GET /report` (and `POST /reset`).
 * Prints one line, `ready {"control":…,"callbacks":[{port, secret}]}`, once listening.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

const count = Number(process.argv[2] ?? '10');
let lags: number[] = [];
const seen: number[] = new Array<number>(count).fill(0);
let badSignatures = 0;

function verify(key: Buffer, req: IncomingMessage, body: Buffer): boolean {
  const id = req.headers['webhook-id'];
  const ts = req.headers['webhook-timestamp'];
  const sig = req.headers['webhook-signature'];
  if (typeof id !== 'string' || typeof ts !== 'string' || typeof sig !== 'string') return false;
  const mac = createHmac('sha256', key).update(`${id}.${ts}.`).update(body).digest();
  return sig.split(' ').some((s) => {
    const [v, b64] = s.split(',');
    const given = Buffer.from(b64 ?? '', 'base64');
    return v === 'v1' && given.length === mac.length && timingSafeEqual(given, mac);
  });
}

function callback(i: number, key: Buffer) {
  return (req: IncomingMessage, res: ServerResponse): void => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      if (!verify(key, req, body)) {
        badSignatures++;
        res.writeHead(401).end();
        return;
      }
      const msg = JSON.parse(body.toString('utf8')) as { type?: string; challenge?: string; timestamp?: string };
      if (msg.type === 'verification') {
        const answer = JSON.stringify({ challenge: msg.challenge });
        res
          .writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(answer) })
          .end(answer);
        return;
      }
      if (msg.timestamp !== undefined) {
        lags.push(Date.now() - Date.parse(msg.timestamp));
        seen[i]!++;
      }
      res.writeHead(204).end();
    });
  };
}

const pct = (sorted: number[], p: number): number =>
  sorted.length === 0 ? Number.NaN : sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;

async function main(): Promise<void> {
  const callbacks: Array<{ port: number; secret: string }> = [];
  for (let i = 0; i < count; i++) {
    const key = randomBytes(32);
    const server = createServer({ keepAliveTimeout: 60_000 }, callback(i, key));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    callbacks.push({ port: (server.address() as AddressInfo).port, secret: `whsec_${key.toString('base64')}` });
  }
  const control = createServer((req, res) => {
    if (req.method === 'POST' && req.url === '/reset') {
      lags = [];
      seen.fill(0);
      res.writeHead(204).end();
      return;
    }
    const sorted = [...lags].sort((a, b) => a - b);
    const body = JSON.stringify({
      delivered: lags.length,
      perCallback: seen,
      badSignatures,
      p50: pct(sorted, 50),
      p90: pct(sorted, 90),
      p99: pct(sorted, 99),
      max: sorted.at(-1) ?? Number.NaN,
    });
    res.writeHead(200, { 'content-type': 'application/json' }).end(body);
  });
  await new Promise<void>((r) => control.listen(0, '127.0.0.1', r));
  process.stdout.write(`ready ${JSON.stringify({ control: (control.address() as AddressInfo).port, callbacks })}\n`);
}

void main();
