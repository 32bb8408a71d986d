/**
 * The ingress hands the hook handler what the signature established: which mappings' keys
 * verified the request, and the sender's delivery id (kept for deduplication). A real HTTP
 * server on loopback, with a hook handler that only records its calls.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createAuthLimiter, createSignatureGate, createTokenVerifier } from '../../src/auth/index.js';
import { createLog } from '../../src/common/log.js';
import { ConfigSchema } from '../../src/config/index.js';
import type { MappedHookCall } from '../../src/hooks/index.js';
import { createHttpServer, createRequestHandler, type HttpServer } from '../../src/http/index.js';
import { send } from '../helpers/http-client.js';
import { HOOK_TOKEN } from '../helpers/temp-config.js';
import { signGithub, signSlack, signStandardWebhooks, signStripe } from '../helpers/sign-webhooks.js';
import { readTextFixture } from '../fixtures/read-fixture.js';

const SW = `whsec_${Buffer.from('context-test-standard-webhooks-k').toString('base64')}`;
const NOW_S = 1_735_819_230;

describe('signature context reaches the hook handler', () => {
  let server: HttpServer;
  let port: number;
  const calls: MappedHookCall[] = [];

  before(async () => {
    const config = ConfigSchema.parse({
      hooks: {
        enabled: true,
        token: HOOK_TOKEN,
        mappings: [
          { id: 'gh', match: { path: 'gh' }, verify: { kind: 'github', secret: 'g' } },
          { id: 'st', match: { path: 'st' }, verify: { kind: 'stripe', secret: 's' } },
          { id: 'sl', match: { path: 'sl' }, verify: { kind: 'slack', secret: 'k' } },
          { id: 'sw', match: { path: 'sw' }, verify: { kind: 'standard-webhooks', secret: SW } },
        ],
      },
    });
    const settings = {
      hooks: config.hooks,
      bodyTimeoutMs: 5_000,
      verifyToken: createTokenVerifier(HOOK_TOKEN),
      signatures: createSignatureGate(config.hooks.mappings),
      waitForRun: () => Promise.reject(new Error('no run is waited for here')),
      handleHook: async (call: MappedHookCall) => {
        calls.push(call);
        return { kind: 'skip' as const };
      },
    };
    const handler = createRequestHandler({
      settings: () => settings,
      limiter: createAuthLimiter(config.hooks.authRateLimit),
      clientAddress: (a) => a ?? 'unknown',
      clock: { now: () => NOW_S * 1000, sleep: async () => undefined },
      log: createLog({ level: 'silent' }),
      isReady: () => true,
    });
    server = createHttpServer(handler, { bodyTimeoutMs: 5_000 });
    port = await server.listen(0, '127.0.0.1');
  });
  after(() => server.close());

  const last = (): MappedHookCall => calls.at(-1)!;

  it('GitHub: the X-GitHub-Delivery id and the verifying mapping', async () => {
    const body = '{"zen":"Design for failure."}';
    const res = await send(port, '/hooks/gh', {
      auth: false,
      body,
      headers: signGithub('g', body, 'c0ffee00-1d5b-11ef-8a39-5c1a7d8b9e10'),
    });
    assert.equal(res.status, 204, res.text);
    assert.equal(last().deliveryId, 'c0ffee00-1d5b-11ef-8a39-5c1a7d8b9e10');
    assert.deepEqual(last().signedBy, { mappingIds: ['gh'] });
  });

  it('Stripe: the event id', async () => {
    const body = readTextFixture('stripe-invoice-paid.json');
    await send(port, '/hooks/st', { auth: false, body, headers: signStripe('s', body, NOW_S) });
    assert.equal(last().deliveryId, 'evt_1QcXv2LkdIwHu7ixq5Rk8b3N');
  });

  it('Slack: the event id and the retry number', async () => {
    const body = readTextFixture('slack-event-callback.json');
    await send(port, '/hooks/sl', {
      auth: false,
      body,
      headers: { ...signSlack('k', body, NOW_S), 'x-slack-retry-num': '1' },
    });
    assert.equal(last().deliveryId, 'Ev0PV52K21');
    assert.equal(last().retryNum, 1);
  });

  it('Standard Webhooks: the webhook-id', async () => {
    const body = '{"type":"user.created"}';
    await send(port, '/hooks/sw', {
      auth: false,
      body,
      headers: signStandardWebhooks(SW, body, NOW_S, 'msg_p5jXN8AQM9LWM0D4loKWxJek'),
    });
    assert.equal(last().deliveryId, 'msg_p5jXN8AQM9LWM0D4loKWxJek');
  });

  it('a request authenticated by the hook token carries neither', async () => {
    await send(port, '/hooks/gh', { body: { zen: 'token' }, headers: { 'x-github-delivery': 'not-verified' } });
    assert.equal(last().signedBy, undefined);
    assert.equal(last().deliveryId, undefined);
  });
});
