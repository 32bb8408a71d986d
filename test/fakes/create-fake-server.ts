import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A request as the fake received it. */
export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: unknown;
}

/** A scripted answer: a status with a JSON body, optionally late or with headers. */
export interface ScriptedResponse {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
  /** Wait this long before answering (for timeouts). */
  delayMs?: number;
}

export interface FakeServer {
  url: string;
  requests: RecordedRequest[];
  /** Answers to give, in order, before falling back to the default handler. */
  script: ScriptedResponse[];
  close(): Promise<void>;
}

/**
 * A loopback HTTP server for third-party API fakes: records every request, answers scripted
 * responses first, then the fake's own handler.
 */
export async function createFakeServer(handle: (req: RecordedRequest) => ScriptedResponse): Promise<FakeServer> {
  const requests: RecordedRequest[] = [];
  const script: ScriptedResponse[] = [];
  const timers = new Set<NodeJS.Timeout>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      let body: unknown = raw;
      try {
        body = raw === '' ? null : JSON.parse(raw);
      } catch {
        // kept as text; the handler decides
      }
      const recorded: RecordedRequest = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body };
      requests.push(recorded);
      const answer = script.shift() ?? handle(recorded);
      const send = (): void => {
        if (res.destroyed) return;
        res.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers });
        res.end(JSON.stringify(answer.body));
      };
      if (answer.delayMs === undefined) send();
      else {
        const t = setTimeout(() => {
          timers.delete(t);
          send();
        }, answer.delayMs);
        timers.add(t);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    script,
    close: () =>
      new Promise<void>((resolve) => {
        for (const t of timers) clearTimeout(t);
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
