/**
 * A sender's delivery id of any length makes an idempotency key the store can keep: longer than 255
 * characters it is stored as its SHA-256 (`boundKey`), so a repeat is still recognised, the key
 * table does not grow with the body, and PostgreSQL does not refuse the key's index entry.
 */
import { it, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { createLog } from '../../src/common/log.js';
import { safeParseConfig, type StoreConfig } from '../../src/config/index.js';
import { boundKey } from '../../src/hooks/resolve-idempotency-key.js';
import { startGateway, type Gateway } from '../../src/main.js';
import { createStoreConfig, describeEachDriver } from '../helpers/store-fixture.js';

const TOKEN = 'long-keys-token-0123456789';

describeEachDriver('idempotency keys made from long sender ids', (driver) => {
  let store: { config: StoreConfig; cleanup(): Promise<void> };
  let gateway: Gateway | undefined;
  beforeEach(() => {
    store = createStoreConfig(driver);
  });
  afterEach(async () => {
    await gateway?.close();
    gateway = undefined;
    await store.cleanup();
  });

  it('stores a 5,000-character Stripe event id as its digest and answers its repeat as a duplicate', async () => {
    const parsed = safeParseConfig(
      {
        gateway: { logLevel: 'silent' },
        hooks: { enabled: true, token: TOKEN },
        agents: { defaults: { heartbeat: { every: 0 } }, list: [{ id: 'main' }] },
        store: store.config,
      },
      { path: `${process.cwd()}/hookgate.json`, env: {} },
    );
    assert.ok(parsed.ok, JSON.stringify(parsed));
    gateway = await startGateway(parsed.loaded, {
      port: 0,
      log: createLog({ level: 'silent' }),
      delivery: { deliver: () => undefined },
    });
    const id = `evt_${'x'.repeat(5000)}`;
    const post = () =>
      fetch(`http://127.0.0.1:${gateway!.port}/hooks/wake`, {
        method: 'POST',
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ object: 'event', id, text: 'invoice paid', mode: 'next-heartbeat' }),
      });
    const first = await post();
    assert.equal(first.status, 200, await first.text());
    const again = await post();
    assert.equal(again.status, 200);
    assert.equal(((await again.json()) as { duplicate?: boolean }).duplicate, true);
    assert.equal((await gateway.store.listSystemEvents({ limit: 10 })).length, 1);
    const stored = await gateway.store.findIdempotencyKey('wake', boundKey(`stripe:${id}`));
    assert.ok(stored !== null, 'kept under the digest');
    assert.match(boundKey(`stripe:${id}`), /^sha256:[0-9a-f]{64}$/);
    assert.equal(boundKey('stripe:evt_short'), 'stripe:evt_short');
  });
});
