/**
 * Durable idempotency: a repeat of an accepted request (same `Idempotency-Key`, or the same
 * sender delivery id) within the window gets the first answer with `"duplicate": true` and starts
 * nothing, even after a restart; keys are scoped per hook.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readConfig } from '../../src/config/index.js';
import { createLog } from '../../src/common/log.js';
import { startGateway } from '../../src/main.js';
import { readTextFixture } from '../fixtures/read-fixture.js';
import { assertError } from '../helpers/assert-response.js';
import { send, type HttpResult } from '../helpers/http-client.js';
import { startTestGateway, type TestGateway } from '../helpers/in-process-gateway.js';
import { signGithub } from '../helpers/sign-webhooks.js';
import { baseConfig } from '../helpers/temp-config.js';

/** The JSON body of a response, as an object. */
const j = (r: HttpResult): Record<string, unknown> => (r.json ?? {}) as Record<string, unknown>;

const GITHUB_SECRET = 'github-webhook-secret-for-idempotency';

describe('durable idempotency', () => {
  let gw: TestGateway;
  after(() => gw?.stop());

  const start = async (): Promise<TestGateway> =>
    startTestGateway(
      baseConfig({
        agents: { list: [{ id: 'main', default: true }], defaults: { heartbeat: { every: 0 } } },
        hooks: {
          mappings: [
            {
              id: 'github',
              match: { path: 'github' },
              action: 'agent',
              messageTemplate: 'PR {{pull_request.title}}',
              deliver: false,
              verify: { kind: 'github', secret: GITHUB_SECRET },
            },
          ],
        },
      }),
    );
  const runCount = async (): Promise<number> => (await gw.gateway.store.listRuns({ limit: 1000 })).length;

  it('answers a repeated Idempotency-Key with the first answer and starts nothing', async () => {
    gw = await start();
    const body = { message: 'summarise', deliver: false };
    const first = await send(gw.port, '/hooks/agent', { body, headers: { 'idempotency-key': 'order-42' } });
    assert.equal(first.status, 202);
    const again = await send(gw.port, '/hooks/agent', { body, headers: { 'idempotency-key': 'order-42' } });
    assert.equal(again.status, 202);
    assert.deepEqual(j(again), { ...j(first), duplicate: true });
    assert.equal(await runCount(), 1);
  });

  it('refuses an Idempotency-Key reused with another body (422), starting nothing, and answers the same body again', async () => {
    const headers = { 'idempotency-key': 'invoice-9' };
    const first = await send(gw.port, '/hooks/agent', { body: { message: 'pay invoice 9', deliver: false }, headers });
    assert.equal(first.status, 202, first.text);
    const runs = await runCount();
    const other = await send(gw.port, '/hooks/agent', { body: { message: 'pay invoice 10', deliver: false }, headers });
    assertError(other, 422, 'idempotency_key_reused');
    assert.equal(await runCount(), runs, 'nothing started');
    // The same body, written with other blanks, is the same request.
    const same = await send(gw.port, '/hooks/agent', {
      body: '{ "message": "pay invoice 9",  "deliver": false }',
      headers,
    });
    assert.equal(same.status, 202, same.text);
    assert.deepEqual(j(same), { ...j(first), duplicate: true });
  });

  it('scopes keys per hook', async () => {
    const wake = await send(gw.port, '/hooks/wake', {
      body: { text: 'hello' },
      headers: { 'idempotency-key': 'order-42' },
    });
    assert.equal(wake.status, 200);
    assert.equal(j(wake)['duplicate'], undefined);
  });

  it('lets exactly one of ten concurrent repeats in', async () => {
    const before = await runCount();
    const all = await Promise.all(
      Array.from({ length: 10 }, () =>
        send(gw.port, '/hooks/agent', { body: { message: 'race' }, headers: { 'idempotency-key': 'race-1' } }),
      ),
    );
    assert.ok(all.every((r) => r.status === 202));
    assert.equal(all.filter((r) => j(r)['duplicate'] === true).length, 9);
    assert.equal(new Set(all.map((r) => j(r)['runId'])).size, 1);
    assert.equal(await runCount(), before + 1);
  });

  it('deduplicates a GitHub redelivery by X-GitHub-Delivery', async () => {
    const before = await runCount();
    const body = readTextFixture('github-pull-request-opened.json');
    const post = () =>
      send(gw.port, '/hooks/github', {
        auth: false,
        body,
        headers: signGithub(GITHUB_SECRET, body, 'a1b2c3d4-0000-11e3-81ab-4c9367dc0958'),
      });
    const first = await post();
    assert.equal(first.status, 202);
    const redelivered = await post();
    assert.equal(j(redelivered)['duplicate'], true);
    assert.equal(j(redelivered)['runId'], j(first)['runId']);
    assert.equal(await runCount(), before + 1);
  });

  it('refuses a malformed Idempotency-Key', async () => {
    const res = await send(gw.port, '/hooks/agent', {
      body: { message: 'x' },
      headers: { 'idempotency-key': 'has spaces in it' },
    });
    assert.equal(res.status, 400);
    assert.equal(j(res)['code'], 'invalid_idempotency_key');
  });

  it('remembers keys across a restart', async () => {
    const path = gw.temp.path;
    await gw.gateway.close();
    const again = await startGateway(readConfig(path, {}), { port: 0, log: createLog({ level: 'silent' }) });
    try {
      const res = await send(again.port, '/hooks/agent', {
        body: { message: 'summarise', deliver: false },
        headers: { 'idempotency-key': 'order-42' },
      });
      assert.equal(j(res)['duplicate'], true);
    } finally {
      await again.close();
    }
  });
});
