/**
 * The pull relay end to end, in process: a relay (hooks verified, deduplicated and held, no agents)
 * and a home gateway that leases from it over HTTP and passes each request through its own door.
 * The storm with the home killed is relay-crash.test.ts.
 */
import { after, afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { assertError } from '../helpers/assert-response.js';
import { metricValue, parseMetrics } from '../helpers/read-metrics.js';
import { freePort } from '../helpers/gateway-process.js';
import { send, type HttpResult } from '../helpers/http-client.js';
import type { TestGateway } from '../helpers/in-process-gateway.js';
import { createLog } from '../../src/common/log.js';
import { readConfig } from '../../src/config/index.js';
import { startGateway } from '../../src/main.js';
import { createTempConfig } from '../helpers/temp-config.js';
import { createServer, request as httpRequest, type Server } from 'node:http';
import { signGithub } from '../helpers/sign-webhooks.js';
import { baseConfig, GATEWAY_TOKEN, HOOK_TOKEN } from '../helpers/temp-config.js';

const RELAY_TOKEN = 'test-relay-token-0d5e9b7a41c2';
const GITHUB_SECRET = 'gh-relay-secret-51a9';
const quiet = { action: 'wake', wakeMode: 'next-heartbeat' };

/** The same mappings on both sides, but `rotated`'s key, which the home changed and the relay did not. */
function mappings(rotatedSecret: string): unknown[] {
  return [
    {
      id: 'github',
      match: { path: 'github' },
      ...quiet,
      textTemplate: 'push {{ payload.n }} ({{ headers.x-github-event }})',
      verify: { kind: 'github', secret: GITHUB_SECRET },
    },
    { id: 'rotated', match: { path: 'rotated' }, ...quiet, verify: { kind: 'github', secret: rotatedSecret } },
    { id: 'plain', match: { path: 'plain' }, ...quiet, textTemplate: 'plain {{ payload.n }}' },
  ];
}

function relayConfig(relay: Record<string, unknown> = {}) {
  return baseConfig({
    hooks: {
      enabled: true,
      token: HOOK_TOKEN,
      mappings: mappings('relay-side-key-0123456789'),
      authRateLimit: { maxFailures: 5 },
    },
    relay: { enabled: true, token: RELAY_TOKEN, leaseSeconds: 2, ...relay },
  });
}

function homeConfig(relayPort: number) {
  return baseConfig({
    hooks: { enabled: true, token: HOOK_TOKEN, mappings: mappings('home-side-key-0123456789') },
    pull: { url: `http://127.0.0.1:${relayPort}`, token: RELAY_TOKEN, waitSeconds: 1, retryMaxSeconds: 1 },
  });
}

function postGithub(port: number, path: string, n: number, o: { delivery?: string; secret?: string } = {}) {
  const body = JSON.stringify({ n, ref: 'refs/heads/main' });
  return send(port, path, {
    auth: false,
    body,
    headers: {
      ...signGithub(o.secret ?? GITHUB_SECRET, body, o.delivery ?? `delivery-${n}`),
      'content-type': 'application/json',
    },
  });
}

const admin = (port: number, path: string, method = 'GET'): Promise<HttpResult> =>
  send(port, `/admin/api${path}`, { method, auth: GATEWAY_TOKEN });
const pull = (port: number, path: string, body: unknown, token: string | false = RELAY_TOKEN): Promise<HttpResult> =>
  send(port, path, { body, auth: token });

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const got = await probe();
    if (got !== undefined) return got;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(25);
  }
}

async function homeTexts(home: TestGateway): Promise<string[]> {
  return (await home.gateway.store.listSystemEvents({ limit: 1000 })).map((e) => e.text).sort();
}

/** Forwards to the relay, answering the first `/relay/ack` 503 itself without passing it on. */
async function startLossyProxy(
  relayPort: number,
): Promise<{ port: number; dropped(): number; close(): Promise<void> }> {
  let dropped = 0;
  const server: Server = createServer((req, res) => {
    if (req.url === '/relay/ack' && dropped === 0) {
      dropped++;
      req.resume();
      res
        .writeHead(503, { 'content-type': 'application/json' })
        .end('{"ok":false,"error":"lost","code":"unavailable"}');
      return;
    }
    const out = httpRequest(
      { host: '127.0.0.1', port: relayPort, path: req.url, method: req.method, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    out.on('error', () => res.destroy());
    req.pipe(out);
  });
  server.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const address = server.address();
  return {
    port: typeof address === 'object' && address !== null ? address.port : 0,
    dropped: () => dropped,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describe('pull relay', () => {
  const running: TestGateway[] = [];
  /** A gateway in this process on `port` (0: any), stopped after the test. */
  const start = async (config: Record<string, unknown>, port = 0): Promise<TestGateway> => {
    const temp = createTempConfig(config);
    const loaded = readConfig(temp.path, {});
    const gateway = await startGateway(loaded, { port, log: createLog({ level: 'silent' }) });
    const g: TestGateway = {
      port: gateway.port,
      gateway,
      loaded,
      temp,
      stop: async () => {
        await gateway.close();
        temp.cleanup();
      },
    };
    running.push(g);
    return g;
  };
  afterEach(async () => {
    for (const g of running.splice(0).reverse()) await g.stop();
  });
  after(async () => {
    for (const g of running.splice(0).reverse()) await g.stop();
  });

  it('answers senders at once, and the home takes each request through its own door once', async () => {
    const relay = await start(relayConfig());
    const first = await postGithub(relay.port, '/hooks/github', 1);
    assert.equal(first.status, 202, first.text);
    const { id } = first.json as { ok: boolean; relayed: boolean; id: string };
    assert.deepEqual(first.json, { ok: true, relayed: true, id });
    const repeat = await postGithub(relay.port, '/hooks/github', 1);
    assert.deepEqual(
      [repeat.status, repeat.json],
      [202, first.json],
      "a repeat of GitHub's delivery gets the first answer",
    );
    assertError(await postGithub(relay.port, '/hooks/github', 2, { secret: 'forged' }), 401, 'signature_invalid');
    assertError(await postGithub(relay.port, '/hooks/gitlab', 3), 401, 'unauthorized');
    assertError(await send(relay.port, '/hooks/nowhere', { body: { n: 4 } }), 404, 'hook_not_found');
    assertError(await send(relay.port, '/hooks/wake', { body: { mode: 'now' } }), 400, 'invalid_payload');
    const plain = await send(relay.port, '/hooks/plain', { body: { n: 5 }, headers: { 'idempotency-key': 'k-5' } });
    assert.equal(plain.status, 202, plain.text);
    const reused = await send(relay.port, '/hooks/plain', { body: { n: 6 }, headers: { 'idempotency-key': 'k-5' } });
    assertError(reused, 422, 'idempotency_key_reused');
    const backlog = (await admin(relay.port, '/relay')).json as { backlog: { pending: number } };
    assert.equal(backlog.backlog.pending, 2);
    await sleep(20);
    const waiting = parseMetrics((await send(relay.port, '/metrics', { method: 'GET', auth: GATEWAY_TOKEN })).text);
    assert.equal(metricValue(waiting, 'hookgate_relay_backlog', { state: 'pending' }), 2);
    assert.ok((metricValue(waiting, 'hookgate_relay_oldest_pending_age_seconds') ?? 0) > 0);
    assert.deepEqual(await relay.gateway.store.listSystemEvents(), [], 'the relay makes no wake itself');

    const home = await start(homeConfig(relay.port));
    const texts = await until('the home to take both', async () => {
      const t = await homeTexts(home);
      return t.length === 2 ? t : undefined;
    });
    assert.deepEqual(texts, ['plain 5', 'push 1 (push)']);
    await until('the relay to see them acknowledged', async () => {
      const b = (await admin(relay.port, '/relay')).json as { backlog: { pending: number } };
      return b.backlog.pending === 0 ? true : undefined;
    });
    const homeMetrics = parseMetrics((await send(home.port, '/metrics', { method: 'GET', auth: GATEWAY_TOKEN })).text);
    assert.equal(metricValue(homeMetrics, 'hookgate_pull_requests_total', { outcome: 'accepted' }), 2);
    assert.equal(metricValue(homeMetrics, 'hookgate_pull_relay_up'), 1);
    assert.equal(metricValue(homeMetrics, 'hookgate_pull_lag_seconds_count'), 2);
    const relayMetrics = parseMetrics(
      (await send(relay.port, '/metrics', { method: 'GET', auth: GATEWAY_TOKEN })).text,
    );
    assert.equal(metricValue(relayMetrics, 'hookgate_relay_backlog', { state: 'pending' }), 0);
    assert.equal(metricValue(relayMetrics, 'hookgate_relay_acknowledged_total', { outcome: 'done' }), 2);
    const records = await until('the home to record both', async () => {
      const r = (await admin(home.port, '/requests')).json as { requests: Array<{ client: string; status: number }> };
      return r.requests.length === 2 ? r.requests : undefined;
    });
    assert.deepEqual(
      records.map((r) => [r.client, r.status]),
      [
        [`relay:127.0.0.1:${relay.port}`, 200],
        [`relay:127.0.0.1:${relay.port}`, 200],
      ],
    );
  });

  it("keeps at the relay, with the home's reason, what the home's own key refuses", async () => {
    const relay = await start(relayConfig());
    const accepted = await postGithub(relay.port, '/hooks/rotated', 7, { secret: 'relay-side-key-0123456789' });
    assert.equal(accepted.status, 202, accepted.text);
    const home = await start(homeConfig(relay.port));
    const dead = await until('the dead letter', async () => {
      const r = (await admin(relay.port, '/relay')).json as {
        dead: Array<{ id: string; status: number; code: string; reason: string }>;
      };
      return r.dead[0];
    });
    assert.equal(dead.id, (accepted.json as { id: string }).id);
    assert.deepEqual([dead.status, dead.code], [401, 'signature_invalid']);
    assert.match(dead.reason, /signature/);
    assert.deepEqual(await homeTexts(home), []);
    const records = await until('the home to record the refusal', async () => {
      const r = (await admin(home.port, '/requests?status=401')).json as {
        requests: Array<{ hook: string; code: string }>;
      };
      return r.requests.length > 0 ? r.requests : undefined;
    });
    assert.deepEqual(
      records.map((r) => [r.hook, r.code]),
      [['rotated', 'signature_invalid']],
    );
    // An operator who fixed the home's key puts it back: refused again here, since the key is still the old one.
    const requeued = await admin(relay.port, `/relay/requests/${dead.id}/requeue`, 'POST');
    assert.equal(requeued.status, 200, requeued.text);
    assertError(await admin(relay.port, `/relay/requests/${dead.id}/requeue`, 'POST'), 409, 'relay_not_requeueable');
  });

  it('removes, by its own ledger, a request leased again after its acknowledgement was lost', async () => {
    const relay = await start(relayConfig());
    await send(relay.port, '/hooks/plain', { body: { n: 9 } });
    // The first acknowledgement never reaches the relay: the home committed, and the relay offers it again.
    const proxy = await startLossyProxy(relay.port);
    try {
      const home = await start(homeConfig(proxy.port));
      const status = await until('the repeat to be acknowledged', async () => {
        const r = (await admin(home.port, '/relay')).json as {
          pull: { counts: { accepted: number; duplicate: number } };
        };
        return r.pull.counts.duplicate === 1 ? r.pull.counts : undefined;
      });
      assert.equal(proxy.dropped(), 1);
      assert.equal(status.accepted, 1);
      assert.deepEqual(await homeTexts(home), ['plain 9'], 'one wake, not two');
      const backlog = (await admin(relay.port, '/relay')).json as { backlog: { pending: number } };
      assert.equal(backlog.backlog.pending, 0);
    } finally {
      await proxy.close();
    }
  });

  it('refuses the pull API without the relay token, and counts that toward the lockout', async () => {
    const relay = await start(relayConfig());
    const refused = await pull(relay.port, '/relay/lease', {}, HOOK_TOKEN);
    assertError(refused, 401, 'relay_unauthorized');
    assert.equal(refused.headers['www-authenticate'], 'Bearer');
    assertError(await pull(relay.port, '/relay/ack', {}, false), 401, 'relay_unauthorized');
    for (let i = 0; i < 3; i++) await pull(relay.port, '/relay/lease', {}, 'guess');
    const locked = await pull(relay.port, '/relay/lease', { waitSeconds: 0 });
    assertError(locked, 429, 'rate_limited');
    assert.ok(Number(locked.headers['retry-after']) > 0);
  });

  it('answers bad pull input with a JSON 400 naming the field', async () => {
    const relay = await start(relayConfig());
    const bad = assertError(
      await pull(relay.port, '/relay/lease', { max: 0, waitSeconds: 'soon' }),
      400,
      'invalid_payload',
    );
    assert.deepEqual(
      bad.issues?.map((i) => i.path),
      ['waitSeconds', 'max'],
    );
    assertError(await pull(relay.port, '/relay/lease', '{not json'), 400, 'invalid_json');
    assertError(await pull(relay.port, '/relay/ack', '[1]'), 400, 'invalid_body');
    const ack = assertError(
      await pull(relay.port, '/relay/ack', { ids: [1], refused: [{ id: 'x', status: 200 }] }),
      400,
      'invalid_payload',
    );
    assert.deepEqual(
      ack.issues?.map((i) => i.path),
      ['ids', 'refused[0]'],
    );
    assertError(
      await send(relay.port, '/relay/lease', { method: 'GET', auth: RELAY_TOKEN }),
      405,
      'method_not_allowed',
    );
  });

  it('holds a lease open until a request arrives', async () => {
    const relay = await start(relayConfig());
    const started = Date.now();
    const waiting = pull(relay.port, '/relay/lease', { waitSeconds: 20 });
    await sleep(300);
    await send(relay.port, '/hooks/plain', { body: { n: 11 } });
    const got = await waiting;
    const requests = (got.json as { requests: Array<{ hook: string; body: string; auth: string }> }).requests;
    assert.deepEqual(
      requests.map((r) => [r.hook, Buffer.from(r.body, 'base64').toString(), r.auth]),
      [['plain', '{"n":11}', 'token']],
    );
    assert.ok(Date.now() - started < 10_000, 'answered when the request came, not at the end of the wait');
  });

  it('keeps the home serving its own door while the relay is down, and pulls once it is back', async () => {
    const relayPort = await freePort();
    const home = await start(homeConfig(relayPort));
    const direct = await send(home.port, '/hooks/wake', { body: { text: 'at home', mode: 'next-heartbeat' } });
    assert.equal(direct.status, 200, direct.text);
    const down = await until('the home to see the relay down', async () => {
      const r = (await admin(home.port, '/relay')).json as { pull: { relayUp: boolean; failingSince: number | null } };
      return r.pull.failingSince !== null ? r.pull : undefined;
    });
    assert.equal(down.relayUp, false);
    const ready = await send(home.port, '/readyz', { method: 'GET', auth: false });
    assert.equal(ready.status, 200, 'ready: the door serves');
    assert.deepEqual((ready.json as { pull: unknown }).pull, {
      relayUp: false,
      failingSince: new Date(down.failingSince!).toISOString(),
    });

    const relay = await start(relayConfig(), relayPort);
    await send(relay.port, '/hooks/plain', { body: { n: 12 } });
    await until('the home to pull again', async () =>
      (await homeTexts(home)).includes('plain 12') ? true : undefined,
    );
    const up = (await admin(home.port, '/relay')).json as { pull: { relayUp: boolean; failingSince: null } };
    assert.deepEqual([up.pull.relayUp, up.pull.failingSince], [true, null]);
  });
});
