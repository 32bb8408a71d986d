/** `forEach`: one action per item, all in one transaction, each item with its own identity. */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { send, type HttpResult } from '../helpers/http-client.js';
import { startTestGateway, type TestGateway } from '../helpers/in-process-gateway.js';
import { baseConfig } from '../helpers/temp-config.js';

const j = (r: HttpResult): { items?: Array<Record<string, unknown>>; code?: string } => (r.json ?? {}) as never;

describe('forEach', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startTestGateway(
      baseConfig({
        agents: { list: [{ id: 'main', default: true }], defaults: { heartbeat: { every: 0 } } },
        hooks: {
          mappings: [
            {
              id: 'orders',
              match: { path: 'orders' },
              action: 'agent',
              deliver: false,
              messageTemplate: 'Order {{item.ref}}: {{item.total}}',
              forEach: { path: 'orders', idPath: 'ref' },
            },
            {
              id: 'alerts',
              match: { path: 'alerts' },
              action: 'wake',
              wakeMode: 'next-heartbeat',
              textTemplate: '{{item}}',
              forEach: { path: 'list', maxItems: 3 },
            },
          ],
        },
      }),
    );
  });
  after(() => gw.stop());

  it('turns 100 items into 100 runs, recorded together', async () => {
    const orders = Array.from({ length: 100 }, (_, i) => ({ ref: `R-${i}`, total: i * 10 }));
    const res = await send(gw.port, '/hooks/orders', { body: { orders } });
    assert.equal(res.status, 202);
    const items = j(res).items!;
    assert.equal(items.length, 100);
    assert.equal(new Set(items.map((i) => i['runId'])).size, 100);
    const runs = await gw.gateway.store.listRuns({ limit: 1000 });
    assert.equal(runs.length, 100);
    assert.ok(runs.some((r) => r.message.includes('Order R-42: 420')));
  });

  it('refuses more than maxItems, recording nothing', async () => {
    const res = await send(gw.port, '/hooks/alerts', { body: { list: ['alert a', 'alert b', 'alert c', 'alert d'] } });
    assert.equal(res.status, 400);
    assert.equal(j(res).code, 'too_many_items');
    const texts = (await gw.gateway.store.listSystemEvents({ limit: 1000 })).map((e) => e.text);
    assert.ok(!texts.some((t) => t.startsWith('alert ')), 'none of the items was recorded');
  });

  it('runs an item seen in an earlier request (same idPath value) only once', async () => {
    const res = await send(gw.port, '/hooks/orders', {
      body: {
        orders: [
          { ref: 'R-7', total: 70 },
          { ref: 'NEW-1', total: 5 },
        ],
      },
    });
    assert.equal(res.status, 202);
    const [seen, fresh] = j(res).items!;
    assert.equal(seen!['duplicate'], true);
    assert.equal(fresh!['duplicate'], undefined);
    assert.equal((await gw.gateway.store.listRuns({ limit: 1000 })).length, 101);
  });

  it('derives item identities from the request key and the index when there is no idPath', async () => {
    const post = () =>
      send(gw.port, '/hooks/alerts', { body: { list: ['x', 'y'] }, headers: { 'idempotency-key': 'alerts-1' } });
    const first = await post();
    assert.equal(first.status, 200);
    assert.equal(j(first).items!.length, 2);
    const again = await post();
    assert.deepEqual(j(again).items, j(first).items);
    assert.equal((again.json as Record<string, unknown>)['duplicate'], true);
  });
});
