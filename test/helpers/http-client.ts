import { request, type Agent, type IncomingHttpHeaders, type OutgoingHttpHeaders } from 'node:http';
import { connect } from 'node:net';
import { HOOK_TOKEN } from './temp-config.js';

/** A response as the client received it. */
export interface HttpResult {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  /** The body parsed as JSON, or `undefined` when it is empty or not JSON. */
  json: unknown;
}

export interface SendOptions {
  method?: string;
  /** Request headers. `Authorization: Bearer HOOK_TOKEN` is added unless `auth` is false. */
  headers?: OutgoingHttpHeaders;
  /** Objects are sent as JSON; strings and buffers as they are. Nothing when undefined. */
  body?: unknown;
  /** Adds `Authorization: Bearer <token>` (the default test token when `true`). @default true */
  auth?: boolean | string;
  /** Connection agent; a fresh connection per request by default. */
  agent?: Agent;
  /** Gives up after this long. @default 15000 */
  timeoutMs?: number;
}

function parseJson(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** Sends one request to the gateway on 127.0.0.1 and reads the whole response. */
export function send(port: number, path: string, options: SendOptions = {}): Promise<HttpResult> {
  const headers: OutgoingHttpHeaders = {};
  const auth = options.auth ?? true;
  if (auth !== false) headers['authorization'] = `Bearer ${auth === true ? HOOK_TOKEN : auth}`;
  let payload: Buffer | undefined;
  if (options.body !== undefined) {
    payload = Buffer.isBuffer(options.body)
      ? options.body
      : Buffer.from(typeof options.body === 'string' ? options.body : JSON.stringify(options.body));
    headers['content-type'] = 'application/json';
    headers['content-length'] = payload.length;
  }
  Object.assign(headers, options.headers);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path,
        method: options.method ?? 'POST',
        headers,
        agent: options.agent ?? false,
        timeout: options.timeoutMs ?? 15_000,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json: parseJson(text) });
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error(`request ${path} timed out`)));
    req.on('error', reject);
    req.end(payload);
  });
}

/** POSTs a JSON body with the default token. */
export function post(
  port: number,
  path: string,
  body: unknown,
  options: Omit<SendOptions, 'body'> = {},
): Promise<HttpResult> {
  return send(port, path, { ...options, body });
}

/** A response read off a raw socket. */
export interface RawResult {
  status: number;
  headers: Record<string, string>;
  text: string;
  json: unknown;
}

/**
 * Writes `head` and then each of `body` to a raw TCP connection, and reads one HTTP/1.1 response
 * (headers plus `Content-Length` bytes). Used where `node:http` would fix up a broken request.
 * Rejects on a connection error (a reset included) or when nothing complete arrives in time.
 */
export function rawExchange(
  port: number,
  head: string,
  body: ReadonlyArray<string | Buffer> = [],
  options: { timeoutMs?: number } = {},
): Promise<RawResult> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port });
    let received = Buffer.alloc(0);
    let done = false;
    const timer = setTimeout(() => finish(new Error('no complete response in time')), options.timeoutMs ?? 15_000);
    const finish = (error: Error | null, result?: RawResult): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      if (error !== null) reject(error);
      else resolve(result!);
    };
    const tryParse = (): void => {
      const end = received.indexOf('\r\n\r\n');
      if (end === -1) return;
      const lines = received.subarray(0, end).toString('latin1').split('\r\n');
      const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(lines[0] ?? '')?.[1] ?? NaN);
      const headers: Record<string, string> = {};
      for (const line of lines.slice(1)) {
        const colon = line.indexOf(':');
        if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
      }
      const length = Number(headers['content-length'] ?? 0);
      const rest = received.subarray(end + 4);
      if (rest.length < length) return;
      const text = rest.subarray(0, length).toString('utf8');
      finish(null, { status, headers, text, json: parseJson(text) });
    };
    socket.on('connect', () => {
      socket.write(head);
      for (const part of body) socket.write(part);
    });
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      tryParse();
    });
    socket.on('error', (error) => finish(error));
    socket.on('close', () =>
      finish(new Error(`connection closed before a complete response (${received.length} bytes)`)),
    );
  });
}
