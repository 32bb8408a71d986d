import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { createLog } from '../../src/common/log.js';
import { readConfig } from '../../src/config/index.js';
import { startGateway, type Gateway } from '../../src/main.js';
import { send } from '../helpers/http-client.js';
import { connectMcpClient, startMcpSubscriber, type McpSubscriber } from '../helpers/mcp-subscriber.js';
import { dropSchema, POSTGRES_URL, postgresUnavailable, uniqueSchema } from '../helpers/store-fixture.js';
import { baseConfig, createTempConfig, type TempConfig } from '../helpers/temp-config.js';

const MCP_TOKEN = 'test-mcp-token-8d2e6c1b';

describe('MCP Events: a fleet of two replicas on PostgreSQL', async () => {
  const why = await postgresUnavailable();
  if (why !== null) {
    process.stderr.write(`SKIPPED: MCP Events fleet: ${why}\n`);
    it('PostgreSQL', { skip: why }, () => undefined);
    return;
  }
  const schema = uniqueSchema('hg_mcp_fleet');
  const temps: TempConfig[] = [];
  const replicas: Gateway[] = [];
  let sub: McpSubscriber;
  const start = async (): Promise<Gateway> => {
    const temp = createTempConfig({
      ...baseConfig({ mcp: { enabled: true, token: MCP_TOKEN, allowLoopbackCallbacks: true } }),
      store: { driver: 'postgres', url: POSTGRES_URL, schema, poolSize: 4, leaseSeconds: 2 },
    });
    temps.push(temp);
    const g = await startGateway(readConfig(temp.path, {}), {
      port: 0,
      log: createLog({ level: 'silent' }),
      mcp: { send: { idleMs: 200 } },
    });
    replicas.push(g);
    return g;
  };
  before(async () => {
    sub = await startMcpSubscriber();
  });
  after(async () => {
    for (const g of replicas) await g.close().catch(() => undefined);
    for (const t of temps) t.cleanup();
    await sub.close();
    await dropSchema(schema);
  });

  it('sends each occurrence to the subscriber once, whichever replica took the hook, and goes on when one stops', async () => {
    const a = await start();
    const client = await connectMcpClient(`http://127.0.0.1:${a.port}/mcp`, MCP_TOKEN, sub.store);
    const sent: string[] = [];
    const wake = async (g: Gateway, text: string) => {
      const res = await send(g.port, '/hooks/wake', { body: { text, mode: 'next-heartbeat' } });
      assert.equal(res.status, 200);
      sent.push((res.json as { eventId: string }).eventId);
    };
    try {
      const r = await client.experimental_events.subscribe({
        name: 'hook.wake',
        delivery: { mode: 'webhook', url: sub.url, allowInsecureLocalhost: true },
      });
      // The first replica takes the subscription before the second one starts.
      for (let i = 0; i < 100 && (await a.store.getSubscription(r.id))!.leaseOwner === null; i++) await sleep(20);
      const holder = (await a.store.getSubscription(r.id))!.leaseOwner;
      assert.ok(holder !== null);
      const b = await start();
      for (let i = 0; i < 200; i += 10) {
        await Promise.all(Array.from({ length: 10 }, (_, k) => wake((i + k) % 2 === 0 ? a : b, `w${i + k}`)));
      }
      await sub.waitFor(() => sub.events.length >= 200, 30_000);
      assert.equal((await b.store.getSubscription(r.id))!.leaseOwner, holder, 'one replica sent them all');
      // The replica that holds it stops and hands its claim back; the other takes it over.
      await a.close();
      for (let i = 0; i < 20; i++) await wake(b, `after ${i}`);
      await sub.waitFor(() => sub.events.length >= 220, 30_000);
      const after = (await b.store.getSubscription(r.id))!.leaseOwner;
      assert.ok(after !== null && after !== holder, 'the other replica holds it now');
      await sleep(500);
      const ids = sub.events.map((e) => e.event.data['eventId'] as string);
      assert.equal(ids.length, 220, 'none twice');
      assert.deepEqual(new Set(ids), new Set(sent));
      const cursors = sub.events.map((e) => Number(e.event.cursor!.slice(4)));
      assert.ok(
        cursors.every((c, i) => i === 0 || c > cursors[i - 1]!),
        'in the order of the log, across replicas',
      );
    } finally {
      await client.close();
    }
  });
});
