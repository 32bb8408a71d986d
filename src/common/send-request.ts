import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { Socket } from 'node:net';

/**
 * Keep-alive connection pools for every outbound call (model APIs, chat APIs), one per process
 * as `fetch` keeps its global dispatcher. `node:http` costs a fraction of `fetch`'s CPU per call,
 * which matters because outbound calls share the event loop with the ingress.
 */
const HTTP_AGENT = new HttpAgent({ keepAlive: true, maxSockets: 64 });
const HTTPS_AGENT = new HttpsAgent({ keepAlive: true, maxSockets: 64 });

/** Largest response body read; a bigger one fails the call rather than filling memory. */
const MAX_RESPONSE_BYTES = 32 * 1024 * 1024;

export interface HttpResponse {
  status: number;
  headers: { get(name: string): string | null };
  text: string;
}

function headerGetter(res: IncomingMessage): HttpResponse['headers'] {
  return {
    get(name) {
      const v = res.headers[name.toLowerCase()];
      return v === undefined ? null : Array.isArray(v) ? v.join(', ') : v;
    },
  };
}

/**
 * A connection (with its TLS handshake, for `https`) not made within the connect timeout. It carries
 * the code and syscall the system gives its own connect timeout, which comes only after about two
 * minutes of unanswered SYNs on Linux.
 */
export class ConnectTimeoutError extends Error {
  readonly code = 'ETIMEDOUT';
  readonly syscall = 'connect';
  constructor(address: string, timeoutMs: number) {
    super(`connect ETIMEDOUT ${address} (not connected within ${timeoutMs} ms)`);
    this.name = 'ConnectTimeoutError';
  }
}

/**
 * One HTTP(S) request with a string body, read to the end as text. Rejects with the signal's
 * reason when it aborts (as `fetch` does), with a `ConnectTimeoutError` when `connectTimeoutMs` is
 * given and a new connection is not made within it (a kept-alive connection is already made), and
 * with the network error otherwise. Once connected, only the signal bounds the wait.
 */
export function sendRequest(
  url: string,
  init: {
    method: string;
    headers: Record<string, string>;
    body?: string;
    signal: AbortSignal;
    connectTimeoutMs?: number;
  },
): Promise<HttpResponse> {
  return new Promise((resolve, reject) => {
    if (init.signal.aborted) {
      reject(init.signal.reason);
      return;
    }
    const target = new URL(url);
    const https = target.protocol === 'https:';
    const headers = { ...init.headers };
    if (init.body !== undefined) headers['content-length'] = String(Buffer.byteLength(init.body));
    const fail = (error: unknown): void => reject(init.signal.aborted ? init.signal.reason : error);
    const req = (https ? httpsRequest : httpRequest)(
      target,
      { method: init.method, headers, agent: https ? HTTPS_AGENT : HTTP_AGENT, signal: init.signal },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_RESPONSE_BYTES) {
            res.destroy(new Error(`response larger than ${MAX_RESPONSE_BYTES} bytes`));
            return;
          }
          chunks.push(chunk);
        });
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: headerGetter(res),
            text: Buffer.concat(chunks).toString('utf8'),
          }),
        );
        res.on('error', fail);
        res.on('aborted', () => fail(new Error('response aborted')));
      },
    );
    req.on('error', fail);
    const { connectTimeoutMs } = init;
    if (connectTimeoutMs !== undefined) {
      const address = `${target.hostname}:${target.port === '' ? (https ? '443' : '80') : target.port}`;
      req.once('socket', (socket: Socket) => {
        if (!socket.connecting) return;
        const timer = setTimeout(
          () => req.destroy(new ConnectTimeoutError(address, connectTimeoutMs)),
          connectTimeoutMs,
        );
        const done = (): void => clearTimeout(timer);
        socket.once(https ? 'secureConnect' : 'connect', done);
        req.once('close', done);
      });
    }
    req.end(init.body);
  });
}
