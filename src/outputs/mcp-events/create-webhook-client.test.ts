import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createWebhookClient } from './create-webhook-client.js';
import { deliveryRetryDelayMs } from './delivery-retry.js';

describe('webhook client: the address is judged at every connection', () => {
  let requests = 0;
  // Each answer closes its connection, so every post makes a new one (and a new lookup).
  const server = createServer((req, res) => {
    requests++;
    req.resume();
    req.on('end', () => res.writeHead(204, { connection: 'close' }).end());
  });
  const listening = new Promise<number>((r) =>
    server.listen(0, '127.0.0.1', () => r((server.address() as AddressInfo).port)),
  );
  after(() => server.close());

  it('refuses a name that rebinds to a private address after it resolved to an allowed one', async () => {
    const port = await listening;
    const answers = ['127.0.0.1', '10.0.0.7'];
    const client = createWebhookClient({
      allow: { loopback: true, private: false },
      lookup: (_host, _o, cb) => cb(null, [{ address: answers.shift() ?? '10.0.0.7', family: 4 }]),
    });
    const post = () =>
      client.post({
        url: `http://rebind.example:${port}/hook`,
        headers: { 'content-type': 'application/json' },
        body: '{}',
        signal: new AbortController().signal,
        timeoutMs: 5_000,
      });
    try {
      const first = await post();
      assert.equal(first.kind === 'answered' && first.status, 204);
      const second = await post();
      assert.equal(second.kind, 'failed');
      assert.equal(second.kind === 'failed' && second.reason, 'address_refused');
      assert.equal((second.kind === 'failed' && (second.error as { address?: string }).address) || '', '10.0.0.7');
      assert.equal(requests, 1, 'the second request never left');
    } finally {
      client.close();
    }
  });

  it('refuses a name when any address it resolves to is refused', async () => {
    const port = await listening;
    const client = createWebhookClient({
      allow: { loopback: true, private: false },
      lookup: (_host, _o, cb) =>
        cb(null, [
          { address: '127.0.0.1', family: 4 },
          { address: '169.254.169.254', family: 4 },
        ]),
    });
    try {
      const r = await client.post({
        url: `http://mixed.example:${port}/hook`,
        headers: {},
        body: '{}',
        signal: new AbortController().signal,
        timeoutMs: 5_000,
      });
      assert.equal(r.kind === 'failed' && r.reason, 'address_refused');
    } finally {
      client.close();
    }
  });
});

describe('delivery retry timing', () => {
  it('doubles from 100 ms to at most 5 minutes, with half the step as jitter', () => {
    assert.equal(
      deliveryRetryDelayMs(1, undefined, () => 0),
      50,
    );
    assert.equal(
      deliveryRetryDelayMs(1, undefined, () => 1),
      100,
    );
    assert.equal(
      deliveryRetryDelayMs(4, undefined, () => 1),
      800,
    );
    assert.equal(
      deliveryRetryDelayMs(40, undefined, () => 1),
      300_000,
    );
  });

  it("takes a callback's Retry-After, at most an hour", () => {
    assert.equal(
      deliveryRetryDelayMs(1, 7_000, () => 0),
      7_000,
    );
    assert.equal(
      deliveryRetryDelayMs(1, 86_400_000, () => 0),
      3_600_000,
    );
  });
});
