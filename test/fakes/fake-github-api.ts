import { createHmac, randomUUID } from 'node:crypto';
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * One delivery attempt as GitHub records it (a "webhook delivery"): the list shows every field but
 * `request`, `response` and `url`'s companions; the detail shows them all. Ids are 64-bit, beyond
 * what a JSON double holds, as GitHub's are.
 */
export interface FakeDelivery {
  id: bigint;
  guid: string;
  delivered_at: string;
  redelivery: boolean;
  duration: number;
  status: string;
  status_code: number;
  event: string;
  action: string | null;
  installation_id: number | null;
  repository_id: number | null;
  throttled_at: string | null;
  url: string;
  request: { headers: Record<string, string>; payload: Record<string, unknown> };
  response: { headers: Record<string, string>; payload: string | null };
}

/** A call the fake API received. */
export interface FakeApiCall {
  method: string;
  path: string;
  query: URLSearchParams;
  authorization: string | undefined;
}

export interface FakeGithubApi {
  /** The API's base URL (`apiBaseUrl`). */
  url: string;
  /** Every attempt, oldest first. */
  deliveries: FakeDelivery[];
  calls: FakeApiCall[];
  /** Sends an event to the webhook's URL as GitHub does (signed, with its headers) and records the attempt. */
  send(event: string, payload: Record<string, unknown>): Promise<FakeDelivery>;
  close(): Promise<void>;
}

const DOCS = 'https://docs.github.com/rest/repos/webhooks';
const HOOKSHOT = 'GitHub-Hookshot/044aadd';
const REPOSITORY_ID = 1_296_269;
/** Where ids start: past 2^53, as GitHub's delivery ids are. */
const FIRST_ID = 12_077_215_967_000_000_001n;

/** JSON text with bigint ids written as bare numbers, the way GitHub writes them. */
const toJson = (value: unknown): string =>
  JSON.stringify(value, (_, v: unknown) => (typeof v === 'bigint' ? `#big:${v}` : v)).replace(/"#big:(\d+)"/g, '$1');

function answer(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers });
  res.end(toJson(body));
}

/** POSTs a recorded request to `url`, as GitHub's hookshot does; resolves with what it got (status 0: no connection). */
function post(
  url: string,
  headers: Record<string, string>,
  body: string,
): Promise<{ status: number; headers: Record<string, string>; text: string | null }> {
  return new Promise((resolve) => {
    const req = request(
      url,
      { method: 'POST', headers: { ...headers, 'content-length': Buffer.byteLength(body) } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const h: Record<string, string> = {};
          for (const [k, v] of Object.entries(res.headers)) if (typeof v === 'string') h[k] = v;
          resolve({ status: res.statusCode ?? 0, headers: h, text: Buffer.concat(chunks).toString('utf8') });
        });
        res.on('error', () => resolve({ status: 0, headers: {}, text: null }));
      },
    );
    req.setTimeout(10_000, () => req.destroy(new Error('timeout')));
    req.on('error', () => resolve({ status: 0, headers: {}, text: null }));
    req.end(body);
  });
}

/**
 * A fake of GitHub's REST API for one webhook (of a repository or an organization): it sends events
 * to the webhook's URL the way GitHub does and keeps every attempt, and answers the webhook
 * deliveries endpoints with GitHub's shapes: the list newest first with cursor pagination in the
 * `Link` header (`per_page` up to 100, default 30), a delivery's detail with its request and
 * response, a redelivery (202, then sent again with the same GUID, recorded as a redelivery).
 * Bearer or `token` auth; 401 and 404 bodies as GitHub writes them.
 */
export async function createFakeGithubApi(options: {
  token: string;
  /** `owner/name`, or the organization. */
  repo?: string;
  org?: string;
  hookId: number;
  secret: string;
  /** The webhook's URL, read at each send (the gateway's port may change across a restart). */
  target: () => string;
}): Promise<FakeGithubApi> {
  const deliveries: FakeDelivery[] = [];
  const calls: FakeApiCall[] = [];
  let nextId = FIRST_ID;
  const hookPath =
    options.repo !== undefined
      ? `/repos/${options.repo}/hooks/${options.hookId}`
      : `/orgs/${options.org}/hooks/${options.hookId}`;

  const attempt = async (
    guid: string,
    event: string,
    payload: Record<string, unknown>,
    headers: Record<string, string>,
    redelivery: boolean,
  ): Promise<FakeDelivery> => {
    const url = options.target();
    const started = Date.now();
    const got = await post(url, headers, JSON.stringify(payload));
    const d: FakeDelivery = {
      id: nextId++,
      guid,
      delivered_at: new Date(started).toISOString(),
      redelivery,
      duration: (Date.now() - started) / 1000,
      // GitHub records a connection that could not be made as a 502.
      status:
        got.status === 0
          ? 'failed to connect to host'
          : got.status < 300
            ? 'OK'
            : `Invalid HTTP Response: ${got.status}`,
      status_code: got.status === 0 ? 502 : got.status,
      event,
      action: typeof payload['action'] === 'string' ? payload['action'] : null,
      installation_id: null,
      repository_id: options.repo === undefined ? null : REPOSITORY_ID,
      throttled_at: null,
      url,
      request: { headers, payload },
      response: { headers: got.headers, payload: got.text },
    };
    deliveries.push(d);
    return d;
  };

  const simple = ({ request: _q, response: _r, url: _u, ...item }: FakeDelivery) => item;

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    for await (const _ of req) {
      // The API calls made here carry no body worth reading.
    }
    const u = new URL(req.url ?? '/', 'http://fake');
    calls.push({
      method: req.method ?? '',
      path: u.pathname,
      query: u.searchParams,
      authorization: req.headers.authorization,
    });
    const auth = req.headers.authorization;
    if (auth === undefined) {
      answer(res, 401, { message: 'Requires authentication', documentation_url: DOCS, status: '401' });
      return;
    }
    if (auth !== `Bearer ${options.token}` && auth !== `token ${options.token}`) {
      answer(res, 401, {
        message: 'Bad credentials',
        documentation_url: 'https://docs.github.com/rest',
        status: '401',
      });
      return;
    }
    const notFound = () => answer(res, 404, { message: 'Not Found', documentation_url: DOCS, status: '404' });
    if (!u.pathname.startsWith(`${hookPath}/deliveries`)) return notFound();
    const rest = u.pathname.slice(`${hookPath}/deliveries`.length);
    if (rest === '' && req.method === 'GET') {
      const perPage = u.searchParams.has('per_page') ? Number(u.searchParams.get('per_page')) : 30;
      if (!Number.isInteger(perPage) || perPage < 1 || perPage > 100) {
        answer(res, 422, { message: 'Validation Failed', documentation_url: DOCS, status: '422' });
        return;
      }
      const cursor = u.searchParams.get('cursor');
      const before = cursor === null ? null : /^v1_(\d+)$/.exec(cursor)?.[1];
      if (before === undefined) {
        answer(res, 400, { message: 'Bad cursor', documentation_url: DOCS, status: '400' });
        return;
      }
      const newestFirst = [...deliveries].sort((a, b) => (a.id < b.id ? 1 : -1));
      const from = before === null ? newestFirst : newestFirst.filter((d) => d.id < BigInt(before));
      const page = from.slice(0, perPage);
      const headers: Record<string, string> = {};
      if (from.length > perPage) {
        const host = req.headers.host ?? 'localhost';
        headers['link'] = `<http://${host}${u.pathname}?per_page=${perPage}&cursor=v1_${page.at(-1)!.id}>; rel="next"`;
      }
      answer(res, 200, page.map(simple), headers);
      return;
    }
    const m = /^\/(\d+)(\/attempts)?$/.exec(rest);
    const d = m === null ? undefined : deliveries.find((x) => x.id === BigInt(m[1]!));
    if (m === null || d === undefined) return notFound();
    if (m[2] === undefined && req.method === 'GET') {
      answer(res, 200, d);
      return;
    }
    if (m[2] !== undefined && req.method === 'POST') {
      answer(res, 202, {});
      void attempt(d.guid, d.event, d.request.payload, d.request.headers, true);
      return;
    }
    notFound();
  };

  const server: Server = createServer((req, res) => void handle(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    deliveries,
    calls,
    send(event, payload) {
      const guid = randomUUID();
      const body = JSON.stringify(payload);
      const headers = {
        Accept: '*/*',
        'Content-Type': 'application/json',
        'User-Agent': HOOKSHOT,
        'X-GitHub-Delivery': guid,
        'X-GitHub-Event': event,
        'X-GitHub-Hook-ID': String(options.hookId),
        'X-GitHub-Hook-Installation-Target-ID': String(REPOSITORY_ID),
        'X-GitHub-Hook-Installation-Target-Type': options.repo === undefined ? 'organization' : 'repository',
        'X-Hub-Signature': `sha1=${createHmac('sha1', options.secret).update(body).digest('hex')}`,
        'X-Hub-Signature-256': `sha256=${createHmac('sha256', options.secret).update(body).digest('hex')}`,
      };
      return attempt(guid, event, payload, headers, false);
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
