import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage, type RequestOptions } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import { parseRetryAfterMs } from '../../common/retry.js';
import { AddressRefusedError, refusedClass, type AddressAllowance } from './address-policy.js';

/** Why a delivery got no HTTP answer, as the extension's `lastError` categories (plus the refusal). */
export type DeliveryFailure = 'connection_refused' | 'timeout' | 'tls_error' | 'address_refused' | 'network_error';

export type WebhookResult =
  | { kind: 'answered'; status: number; retryAfterMs: number | undefined; body: string }
  | { kind: 'failed'; reason: DeliveryFailure; error: Error };

export interface WebhookPost {
  url: string;
  headers: Record<string, string>;
  body: string;
  signal: AbortSignal;
  /** Connect, send and the whole answer within this. */
  timeoutMs: number;
}

export interface WebhookClient {
  post(request: WebhookPost): Promise<WebhookResult>;
  /** Closes the kept-alive connections. */
  close(): void;
}

type Lookup = (
  hostname: string,
  options: { all: true },
  callback: (error: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void,
) => void;

/** Parsed callback URLs kept; past it the cache starts over (bounded by mcp.maxSubscriptions in practice). */
const MAX_TARGETS = 10_000;

/** The most of an answer read: a challenge's echo is small, and an answer's body is otherwise dropped. */
const MAX_ANSWER_BYTES = 64 * 1024;

class DeliveryTimeoutError extends Error {
  readonly code = 'ETIMEDOUT';
  constructor(ms: number) {
    super(`no answer within ${ms} ms`);
    this.name = 'DeliveryTimeoutError';
  }
}

function categorize(error: Error): DeliveryFailure {
  if (error instanceof AddressRefusedError) return 'address_refused';
  const code = (error as { code?: unknown }).code;
  if (error instanceof DeliveryTimeoutError || code === 'ETIMEDOUT') return 'timeout';
  if (code === 'ECONNREFUSED') return 'connection_refused';
  if (typeof code === 'string' && (code.startsWith('ERR_TLS') || code.includes('CERT') || code.startsWith('ERR_SSL')))
    return 'tls_error';
  return 'network_error';
}

/**
 * Outbound HTTP for webhook callbacks: `node:http(s)` with kept-alive connections, a deadline and
 * an `AbortSignal`, no redirect followed (a 3xx is an answer like any non-2xx), the answer read to
 * at most 64 KiB. The SSRF check is made on the address actually connected to: a hostname is
 * resolved by this client's own lookup, which refuses it when any address it resolves to is in a
 * refused range, so a name that resolves to a public address at subscribe time and to 127.0.0.1 at
 * delivery time (DNS rebinding) is refused at delivery. A literal address is checked before the
 * connection. TLS and `Host` keep the URL's name.
 */
export function createWebhookClient(options: {
  allow: AddressAllowance;
  /** Resolves hostnames (tests resolve a name to an address of their choice). @default dns.lookup */
  lookup?: Lookup;
}): WebhookClient {
  const resolve: Lookup = options.lookup ?? ((host, o, cb) => dnsLookup(host, o, cb));
  const checkedLookup = (
    hostname: string,
    o: { all?: boolean; family?: number },
    callback: (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void,
  ): void => {
    resolve(hostname, { all: true }, (error, addresses) => {
      if (error !== null) return callback(error, '');
      const wanted = addresses.filter((a) => o.family === undefined || o.family === 0 || a.family === o.family);
      for (const a of wanted) {
        const cls = refusedClass(a.address, options.allow);
        if (cls !== null) return callback(new AddressRefusedError(a.address, cls), '');
      }
      if (wanted.length === 0)
        return callback(Object.assign(new Error(`${hostname} did not resolve`), { code: 'ENOTFOUND' }), '');
      if (o.all === true) return callback(null, wanted);
      return callback(null, wanted[0]!.address, wanted[0]!.family);
    });
  };
  const agentOptions = { keepAlive: true, maxSockets: 8, lookup: checkedLookup as never };
  const http = new HttpAgent(agentOptions);
  const https = new HttpsAgent(agentOptions);
  /** Callback URLs as request options, parsed once each (a subscription posts to one URL again and again). */
  const targets = new Map<string, { secure: boolean; host: string; options: RequestOptions }>();
  const targetOf = (url: string) => {
    let t = targets.get(url);
    if (t === undefined) {
      const u = new URL(url);
      const secure = u.protocol === 'https:';
      t = {
        secure,
        host: u.hostname.startsWith('[') ? u.hostname.slice(1, -1) : u.hostname,
        options: {
          protocol: u.protocol,
          hostname: u.hostname.startsWith('[') ? u.hostname.slice(1, -1) : u.hostname,
          port: u.port === '' ? (secure ? 443 : 80) : Number(u.port),
          path: `${u.pathname}${u.search}`,
          method: 'POST',
          agent: secure ? https : http,
        },
      };
      if (targets.size >= MAX_TARGETS) targets.clear();
      targets.set(url, t);
    }
    return t;
  };
  return {
    post(p) {
      return new Promise((resolvePost) => {
        const { secure, host, options: base } = targetOf(p.url);
        const fail = (error: Error): void => resolvePost({ kind: 'failed', reason: categorize(error), error });
        if (isIP(host) !== 0) {
          const cls = refusedClass(host, options.allow);
          if (cls !== null) return fail(new AddressRefusedError(host, cls));
        }
        if (p.signal.aborted) return fail(p.signal.reason instanceof Error ? p.signal.reason : new Error('aborted'));
        const headers = { ...p.headers, 'content-length': String(Buffer.byteLength(p.body)) };
        let settled = false;
        const once = (f: () => void): void => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          f();
        };
        const req = (secure ? httpsRequest : httpRequest)(
          { ...base, headers, signal: p.signal },
          (res: IncomingMessage) => {
            const chunks: Buffer[] = [];
            let size = 0;
            res.on('data', (chunk: Buffer) => {
              size += chunk.length;
              if (size <= MAX_ANSWER_BYTES) chunks.push(chunk);
            });
            res.on('end', () =>
              once(() =>
                resolvePost({
                  kind: 'answered',
                  status: res.statusCode ?? 0,
                  retryAfterMs: parseRetryAfterMs(
                    typeof res.headers['retry-after'] === 'string' ? res.headers['retry-after'] : undefined,
                    Date.now(),
                  ),
                  body: Buffer.concat(chunks).toString('utf8'),
                }),
              ),
            );
            res.on('error', (error) => once(() => fail(error)));
            res.on('aborted', () => once(() => fail(new Error('answer aborted'))));
          },
        );
        const timer = setTimeout(() => req.destroy(new DeliveryTimeoutError(p.timeoutMs)), p.timeoutMs);
        req.on('error', (error) => once(() => fail(error)));
        req.end(p.body);
      });
    },
    close() {
      http.destroy();
      https.destroy();
    },
  };
}
