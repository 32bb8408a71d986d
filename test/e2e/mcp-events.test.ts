import { describe, it, before, after, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { createLog } from '../../src/common/log.js';
import { readConfig } from '../../src/config/index.js';
import { startGateway, type Gateway, type GatewayDeps } from '../../src/main.js';
import { send } from '../helpers/http-client.js';
import { connectMcpClient, startMcpSubscriber, type McpSubscriber } from '../helpers/mcp-subscriber.js';
import { baseConfig, createTempConfig, type ConfigDoc, type TempConfig } from '../helpers/temp-config.js';

const MCP_TOKEN = 'test-mcp-token-8d2e6c1b';
const NONE = { events: 0, runs: 0, deliveries: 0, transcript: 0, requests: 0 };

interface McpGateway {
  gateway: Gateway;
  port: number;
  url: string;
  temp: TempConfig;
  stop(): Promise<void>;
}

async function startMcpGateway(overrides: ConfigDoc = {}, mcp: GatewayDeps['mcp'] = {}): Promise<McpGateway> {
  const temp = createTempConfig(
    baseConfig({ mcp: { enabled: true, token: MCP_TOKEN, allowLoopbackCallbacks: true }, ...overrides }),
  );
  const gateway = await startGateway(readConfig(temp.path, {}), {
    port: 0,
    log: createLog({ level: process.env.MCP_TEST_LOG === '1' ? 'debug' : 'silent' }),
    mcp: { minTtlMs: 50, send: { idleMs: 200 }, ...mcp },
  });
  let stopped = false;
  return {
    gateway,
    port: gateway.port,
    url: `http://127.0.0.1:${gateway.port}/mcp`,
    temp,
    async stop() {
      if (stopped) return;
      stopped = true;
      await gateway.close();
      temp.cleanup();
    },
  };
}

const wake = (port: number, text: string) => send(port, '/hooks/wake', { body: { text, mode: 'next-heartbeat' } });

/** Raw JSON-RPC to the endpoint (what no SDK would send). */
const rpc = (port: number, body: unknown, o: { auth?: string | false; headers?: Record<string, string> } = {}) =>
  send(port, '/mcp', {
    body,
    auth: o.auth ?? MCP_TOKEN,
    headers: { 'content-type': 'application/json', ...o.headers },
  });

describe('MCP Events: the endpoint with the AI SDK client', () => {
  let gw: McpGateway;
  let sub: McpSubscriber;
  beforeEach(async () => {
    gw = await startMcpGateway(
      {
        hooks: {
          enabled: true,
          token: 'test-hook-token-6f1c2a9e',
          mappings: [
            { id: 'github', match: { path: 'github' }, action: 'event', textTemplate: 'PR {{ number }}' },
            { id: 'stripe', match: { path: 'stripe' }, action: 'wake' },
          ],
        },
      },
      { pageSize: 2 },
    );
    sub = await startMcpSubscriber();
  });
  afterEach(async () => {
    await sub.close();
    await gw.stop();
  });
  /** The AI SDK's client on the endpoint, with the subscriber's store, closed after `use`. */
  const withClient = async (use: (client: Awaited<ReturnType<typeof connectMcpClient>>) => Promise<void>) => {
    const client = await connectMcpClient(gw.url, MCP_TOKEN, sub.store);
    try {
      await use(client);
    } finally {
      await client.close();
    }
  };

  it('lists one event per source, each with its schemas and both deliveries, over pages, by discover', async () => {
    await withClient(async (client) => {
      assert.equal(client.initializeResult.protocolVersion, '2026-07-28');
      const names: string[] = [];
      let cursor: string | undefined;
      let pages = 0;
      do {
        const page = await client.experimental_events.list(cursor === undefined ? {} : { params: { cursor } });
        pages++;
        for (const e of page.events) {
          names.push(e.name);
          assert.deepEqual(e.delivery, ['webhook', 'poll']);
          assert.equal(
            (e.inputSchema as { properties: Record<string, unknown> }).properties['agentId'] !== undefined,
            true,
          );
          assert.equal((e.payloadSchema as { type: string }).type, 'object');
        }
        cursor = page.nextCursor ?? undefined;
      } while (cursor !== undefined);
      assert.deepEqual(names, ['hook.wake', 'hook.agent', 'hook.github', 'hook.stripe', 'run.finished']);
      assert.equal(pages, 3);
    });
  });

  it('serves the older initialize handshake, with the events capability', async () => {
    const { createMCPClient } = await import('@ai-sdk/mcp');
    const client = await createMCPClient({
      transport: { type: 'http', url: gw.url, headers: { Authorization: `Bearer ${MCP_TOKEN}` } },
      protocolVersionDiscovery: false,
    });
    try {
      assert.equal(client.initializeResult.protocolVersion, '2025-11-25');
      assert.ok(client.initializeResult.capabilities.events);
      assert.equal((await client.experimental_events.list()).events.length, 2);
    } finally {
      await client.close();
    }
  });

  it('verifies the callback, then delivers 1,000 hooks once each, in order, every one verified by the SDK', async () => {
    await withClient(async (client) => {
      const r = await client.experimental_events.subscribe({
        name: 'hook.wake',
        delivery: { mode: 'webhook', url: sub.url, allowInsecureLocalhost: true },
      });
      assert.match(r.id, /^sub_[0-9a-f]{32}$/);
      assert.equal(r.truncated, false);
      const sent: string[] = [];
      for (let i = 0; i < 1000; i += 25) {
        const batch = await Promise.all(Array.from({ length: 25 }, (_, k) => wake(gw.port, `wake ${i + k}`)));
        for (const res of batch) {
          assert.equal(res.status, 200);
          sent.push((res.json as { eventId: string }).eventId);
        }
      }
      await sub.waitFor(() => sub.events.length >= 1000, 60_000);
      await sleep(300);
      assert.equal(sub.events.length, 1000, 'no occurrence twice');
      assert.deepEqual(new Set(sub.events.map((e) => e.event.data['eventId'])), new Set(sent));
      const cursors = sub.events.map((e) => Number(e.event.cursor!.slice(4)));
      assert.ok(
        cursors.every((c, i) => i === 0 || c > cursors[i - 1]!),
        'in the order of the log',
      );
      assert.ok(sub.events.every((e) => e.subscriptionId === r.id && e.event.name === 'hook.wake'));
      assert.equal(sub.answered.get(401) ?? 0, 0, 'every delivery verified');
    });
  });

  it('delivers an event mapping by its name and the arguments filter by agent', async () => {
    await withClient(async (client) => {
      await client.experimental_events.subscribe({
        name: 'hook.github',
        delivery: { mode: 'webhook', url: sub.url, allowInsecureLocalhost: true },
      });
      await client.experimental_events.subscribe({
        name: 'hook.github',
        arguments: { agentId: 'ops' },
        delivery: { mode: 'webhook', url: sub.url, allowInsecureLocalhost: true },
      });
      const res = await send(gw.port, '/hooks/github', { body: { number: 42 } });
      assert.equal(res.status, 200);
      const { eventId } = res.json as { eventId: string };
      await sub.waitFor(() => sub.events.length === 1);
      await sleep(300);
      assert.equal(sub.events.length, 1, 'the agentId filter holds back an occurrence about another agent');
      assert.equal(sub.events[0]!.event.eventId, eventId);
      assert.equal(sub.events[0]!.event.data['text'], 'PR 42');
      assert.equal(sub.events[0]!.event.data['action'], 'event');
    });
  });

  it('delivers every event missed while the subscriber was down, in order, once it is back', async () => {
    await withClient(async (client) => {
      await client.experimental_events.subscribe({
        name: 'hook.wake',
        delivery: { mode: 'webhook', url: sub.url, allowInsecureLocalhost: true },
      });
      sub.down(503);
      const sent: string[] = [];
      for (let i = 0; i < 30; i++) sent.push(((await wake(gw.port, `w${i}`)).json as { eventId: string }).eventId);
      await sub.waitFor(() => (sub.answered.get(503) ?? 0) >= 3);
      await sleep(500);
      assert.equal(sub.events.length, 0);
      sub.up();
      await sub.waitFor(() => sub.events.length >= 30, 30_000);
      assert.deepEqual(
        sub.events.map((e) => e.event.data['eventId']),
        sent,
        'every one, in order',
      );
    });
  });

  it('resubscribes from a saved cursor and gets exactly what it missed', async () => {
    await withClient(async (client) => {
      const delivery = { mode: 'webhook' as const, url: sub.url, allowInsecureLocalhost: true };
      const first = await client.experimental_events.subscribe({ name: 'hook.wake', delivery });
      await wake(gw.port, 'seen');
      await sub.waitFor(() => sub.events.length === 1);
      const saved = sub.events[0]!.event.cursor!;
      await client.experimental_events.unsubscribe({ id: first.id });
      const missed = [];
      for (const text of ['missed 1', 'missed 2'])
        missed.push(((await wake(gw.port, text)).json as { eventId: string }).eventId);
      const again = await client.experimental_events.subscribe({ name: 'hook.wake', delivery, cursor: saved });
      assert.equal(again.truncated, false);
      await sub.waitFor(() => sub.events.length === 3);
      await sleep(200);
      assert.deepEqual(
        sub.events.slice(1).map((e) => e.event.data['eventId']),
        missed,
      );
    });
  });

  it('sends a gap when retention pruned past a subscription, then goes on from there', async () => {
    await withClient(async (client) => {
      await client.experimental_events.subscribe({
        name: 'hook.wake',
        delivery: { mode: 'webhook', url: sub.url, allowInsecureLocalhost: true },
      });
      sub.down(503);
      for (let i = 0; i < 3; i++) await wake(gw.port, `old ${i}`);
      await sub.waitFor(() => (sub.answered.get(503) ?? 0) >= 1);
      const pruned = await gw.gateway.store.prune({ ...NONE, eventLog: Date.now() + 1_000 }, 100);
      assert.equal(pruned.eventLog, 3);
      const kept = ((await wake(gw.port, 'after the prune')).json as { eventId: string }).eventId;
      sub.up();
      await sub.waitFor(() => sub.events.length === 1, 30_000);
      assert.equal(sub.gaps.length, 1, 'one gap for what was pruned');
      assert.equal(sub.events[0]!.event.data['eventId'], kept);
    });
  });

  it('terminates a subscription whose TTL lapsed without a refresh', async () => {
    await withClient(async (client) => {
      const r = await client.experimental_events.subscribe({
        name: 'hook.wake',
        delivery: { mode: 'webhook', url: sub.url, allowInsecureLocalhost: true },
        ttlMs: 300,
      });
      await sub.waitFor(() => sub.terminations.length === 1, 10_000);
      assert.deepEqual(sub.terminations[0], { subscriptionId: r.id, code: -32011, reason: 'expired' });
      await sub.waitFor(() => sub.store.all().length === 0);
      for (let i = 0; i < 50 && (await gw.gateway.store.getSubscription(r.id)) !== null; i++) await sleep(20);
      assert.equal(await gw.gateway.store.getSubscription(r.id), null, 'gone from the gateway too');
    });
  });

  it('terminates a subscription an operator removed, and drops one whose callback answered 410', async () => {
    await withClient(async (client) => {
      const delivery = { mode: 'webhook' as const, url: sub.url, allowInsecureLocalhost: true };
      const removed = await client.experimental_events.subscribe({ name: 'hook.wake', delivery });
      const dropped = await client.experimental_events.subscribe({ name: 'hook.agent', delivery });
      await gw.gateway.store.terminateSubscription(removed.id, 'removed', Date.now());
      await sub.waitFor(() => sub.terminations.length === 1);
      assert.deepEqual(sub.terminations[0], { subscriptionId: removed.id, code: -32012, reason: 'removed' });
      sub.down(410);
      await send(gw.port, '/hooks/agent', { body: { message: 'hi' } });
      for (let i = 0; i < 250 && (await gw.gateway.store.getSubscription(dropped.id)) !== null; i++) await sleep(20);
      assert.equal(await gw.gateway.store.getSubscription(dropped.id), null);
    });
  });

  it('polls from a cursor: nothing for "now", then what came after, with the cursor at the head', async () => {
    const poll = async (params: Record<string, unknown>) =>
      (await rpc(gw.port, { jsonrpc: '2.0', id: 1, method: 'events/poll', params })).json as {
        result: { events: Array<{ eventId: string; data: Record<string, unknown> }>; cursor: string; hasMore: boolean };
      };
    const start = await poll({ name: 'hook.wake', cursor: null });
    assert.deepEqual(start.result.events, []);
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push(((await wake(gw.port, `p${i}`)).json as { eventId: string }).eventId);
    const page = await poll({ name: 'hook.wake', cursor: start.result.cursor, maxEvents: 2 });
    assert.equal(page.result.hasMore, true);
    const rest = await poll({ name: 'hook.wake', cursor: page.result.cursor });
    assert.deepEqual(
      [...page.result.events, ...rest.result.events].map((e) => e.data['eventId']),
      ids,
    );
    assert.equal(rest.result.hasMore, false);
    assert.deepEqual((await poll({ name: 'hook.wake', cursor: rest.result.cursor })).result.events, []);
  });
});

describe('MCP Events: refusals', () => {
  let gw: McpGateway;
  before(async () => {
    gw = await startMcpGateway({ mcp: { enabled: true, token: MCP_TOKEN } });
  });
  after(() => gw.stop());

  const subscribe = (url: string) =>
    rpc(gw.port, {
      jsonrpc: '2.0',
      id: 7,
      method: 'events/subscribe',
      params: {
        name: 'hook.wake',
        delivery: { mode: 'webhook', url, secret: `whsec_${Buffer.alloc(32, 1).toString('base64')}` },
      },
    });
  const errorOf = (res: { json: unknown }) =>
    (res.json as { error: { code: number; message: string; data?: unknown } }).error;

  for (const [what, url, needle] of [
    ['a hostname that resolves to 127.0.0.1', 'https://localhost:9/hook', 'resolves to 127.0.0.1'],
    ['a loopback literal over https', 'https://127.0.0.1:9/hook', 'loopback'],
    ['plain http while loopback callbacks are off', 'http://127.0.0.1:9/hook', 'must use https'],
    ['a private address', 'https://10.1.2.3/hook', 'private'],
    ['the metadata address', 'https://169.254.169.254/latest', 'metadata'],
    ['an IPv4-mapped loopback', 'https://[::ffff:127.0.0.1]/hook', 'loopback'],
    ['credentials in the URL', 'https://user:pw@example.com/hook', 'credentials'],
  ] as const) {
    it(`refuses a callback at ${what}, naming delivery.url`, async () => {
      const res = await subscribe(url);
      assert.equal(res.status, 200);
      const error = errorOf(res);
      assert.equal(error.code, -32602);
      assert.match(error.message, /delivery\.url/);
      assert.ok(error.message.includes(needle), error.message);
      assert.deepEqual(await gw.gateway.store.listSubscriptions(), []);
    });
  }

  it('answers malformed JSON-RPC with its codes and never a 500', async () => {
    const notJson = await send(gw.port, '/mcp', {
      body: '{"jsonrpc":',
      auth: MCP_TOKEN,
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(notJson.status, 400);
    assert.equal(errorOf(notJson).code, -32700);
    const batch = await rpc(gw.port, [{ jsonrpc: '2.0', id: 1, method: 'ping' }]);
    assert.equal(batch.status, 400);
    assert.equal(errorOf(batch).code, -32600);
    const noVersion = await rpc(gw.port, { id: 1, method: 'ping' });
    assert.equal(errorOf(noVersion).code, -32600);
    const unknown = await rpc(gw.port, { jsonrpc: '2.0', id: 1, method: 'tools/call' });
    assert.equal(unknown.status, 200);
    assert.equal(errorOf(unknown).code, -32601);
    const badName = await rpc(gw.port, { jsonrpc: '2.0', id: 1, method: 'events/poll', params: { name: 'hook.nope' } });
    assert.equal(errorOf(badName).code, -32011);
    assert.match(errorOf(badName).message, /hook\.nope/);
    const badArgs = await rpc(gw.port, {
      jsonrpc: '2.0',
      id: 1,
      method: 'events/poll',
      params: { name: 'hook.wake', arguments: { color: 'red' } },
    });
    assert.equal(errorOf(badArgs).code, -32602);
    assert.match(errorOf(badArgs).message, /arguments\.color/);
    const badSecret = await rpc(gw.port, {
      jsonrpc: '2.0',
      id: 1,
      method: 'events/subscribe',
      params: { name: 'hook.wake', delivery: { mode: 'webhook', url: 'https://example.com/h', secret: 'hunter2' } },
    });
    assert.match(errorOf(badSecret).message, /delivery\.secret/);
    const notification = await rpc(gw.port, { jsonrpc: '2.0', method: 'notifications/initialized' });
    assert.equal(notification.status, 202);
    const get = await send(gw.port, '/mcp', { method: 'GET', auth: MCP_TOKEN });
    assert.equal(get.status, 405);
  });

  it('refuses a wrong token with 401, counted toward the lockout, and never takes the hook token', async () => {
    const res = await rpc(gw.port, { jsonrpc: '2.0', id: 1, method: 'ping' }, { auth: 'test-hook-token-6f1c2a9e' });
    assert.equal(res.status, 401);
    assert.equal((res.json as { code: string }).code, 'mcp_unauthorized');
    assert.equal(res.headers['www-authenticate'], 'Bearer');
    const ok = await rpc(gw.port, { jsonrpc: '2.0', id: 1, method: 'ping' });
    assert.equal(ok.status, 200);
  });
});

describe('MCP Events: across a restart', () => {
  it('keeps its subscriptions and their positions, and delivers what was missed once the gateway is back', async () => {
    const temp = createTempConfig(
      baseConfig({ mcp: { enabled: true, token: MCP_TOKEN, allowLoopbackCallbacks: true } }),
    );
    const sub = await startMcpSubscriber();
    const open = () =>
      startGateway(readConfig(temp.path, {}), {
        port: 0,
        log: createLog({ level: 'silent' }),
        mcp: { send: { idleMs: 200 } },
      });
    let gateway = await open();
    try {
      const client = await connectMcpClient(`http://127.0.0.1:${gateway.port}/mcp`, MCP_TOKEN, sub.store);
      const r = await client.experimental_events.subscribe({
        name: 'hook.wake',
        delivery: { mode: 'webhook', url: sub.url, allowInsecureLocalhost: true },
      });
      await client.close();
      await wake(gateway.port, 'before');
      await sub.waitFor(() => sub.events.length === 1);
      sub.down(503);
      const missed = [];
      for (let i = 0; i < 5; i++)
        missed.push(((await wake(gateway.port, `while down ${i}`)).json as { eventId: string }).eventId);
      await sub.waitFor(() => (sub.answered.get(503) ?? 0) >= 1);
      await gateway.close();
      gateway = await open();
      assert.equal((await gateway.store.getSubscription(r.id))?.state, 'active');
      sub.up();
      await sub.waitFor(() => sub.events.length === 6, 30_000);
      assert.deepEqual(
        sub.events.slice(1).map((e) => e.event.data['eventId']),
        missed,
      );
    } finally {
      await gateway.close();
      await sub.close();
      temp.cleanup();
    }
  });
});

describe('MCP Events: log hygiene', () => {
  it("never logs a subscriber's secret, the MCP token or what a hook carried, at debug level", async () => {
    const lines: string[] = [];
    const temp = createTempConfig(
      baseConfig({
        gateway: { logLevel: 'debug' },
        mcp: { enabled: true, token: MCP_TOKEN, allowLoopbackCallbacks: true },
      }),
    );
    const gateway = await startGateway(readConfig(temp.path, {}), {
      port: 0,
      log: createLog({ level: 'debug', write: (l) => lines.push(l) }),
      mcp: { minTtlMs: 50, send: { idleMs: 100 } },
    });
    const sub = await startMcpSubscriber();
    const client = await connectMcpClient(`http://127.0.0.1:${gateway.port}/mcp`, MCP_TOKEN, sub.store);
    try {
      await client.experimental_events.subscribe({
        name: 'hook.wake',
        delivery: { mode: 'webhook', url: sub.url, allowInsecureLocalhost: true },
        ttlMs: 1_500,
      });
      const secret = sub.store.all()[0]!.delivery.secret;
      await wake(gateway.port, 'MARKER-payload-4e1c');
      await sub.waitFor(() => sub.events.length === 1);
      sub.down(503);
      await wake(gateway.port, 'MARKER-payload-4e1c again');
      await sub.waitFor(() => (sub.answered.get(503) ?? 0) >= 2);
      sub.up();
      await sub.waitFor(() => sub.terminations.length === 1, 10_000);
      await rpc(gateway.port, { jsonrpc: '2.0', id: 1, method: 'ping' }, { auth: 'not-the-token' });
      const text = lines.join('\n');
      assert.ok(text.includes('subscription delivery failed'), 'the failure is logged');
      for (const s of [secret, secret.slice(6), MCP_TOKEN, 'MARKER-payload-4e1c'])
        assert.ok(!text.includes(s), `no ${s.slice(0, 8)}… in the logs`);
    } finally {
      await client.close();
      await gateway.close();
      await sub.close();
      temp.cleanup();
    }
  });
});
