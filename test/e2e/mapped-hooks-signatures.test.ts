/**
 * Mapped hooks end to end, part 5: senders that sign instead of sending the hook token. Every
 * request is signed here the way its sender documents it; stale, future, tampered, wrongly keyed
 * and unsigned requests are refused with 401 `signature_invalid` and counted toward the lockout.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { assertError } from '../helpers/assert-response.js';
import { send, type HttpResult } from '../helpers/http-client.js';
import { baseConfig, HOOK_TOKEN } from '../helpers/temp-config.js';
import {
  createEd25519Keys,
  signGithub,
  signHmac,
  signSlack,
  signStandardWebhooks,
  signStandardWebhooksEd25519,
  signStripe,
  type Headers,
} from '../helpers/sign-webhooks.js';
import { readTextFixture } from '../fixtures/read-fixture.js';
import type { RequestRecord } from '../../src/store/index.js';
import { startMappedGateway, type MappedGateway } from './mapped-hooks-harness.js';

const GITHUB_SECRET = 'gh-webhook-secret-3b81f0';
const STRIPE_SECRETS = ['whsec_test_old_9fK2', 'whsec_test_new_7Qp1'];
const SLACK_SECRET = '8f742231b10e8888abcd99yyyzzz85a5';
const SW_SECRET = `whsec_${Buffer.from('standard-webhooks-e2e-key-32-byt').toString('base64')}`;
const ed = createEd25519Keys();

const nowS = (): number => Math.floor(Date.now() / 1000);

/** Posts `body` exactly as given, with the sender's headers and no hook token. */
function postSigned(
  gw: MappedGateway,
  path: string,
  body: string,
  headers: Headers,
  contentType = 'application/json',
): Promise<HttpResult> {
  return send(gw.port, path, { auth: false, body, headers: { ...headers, 'content-type': contentType } });
}

describe('mapped hooks: provider signatures', () => {
  let gw: MappedGateway;
  const quiet = { deliver: false, wakeMode: 'next-heartbeat' };

  before(async () => {
    gw = await startMappedGateway(
      baseConfig({
        gateway: { recordPayloads: true },
        hooks: {
          enabled: true,
          token: HOOK_TOKEN,
          authRateLimit: { maxFailures: 1000, windowSeconds: 600, lockoutSeconds: 600 },
          mappings: [
            {
              id: 'github',
              match: { path: 'github' },
              action: 'agent',
              messageTemplate: 'PR {{pull_request.title}}',
              verify: { kind: 'github', secret: GITHUB_SECRET },
              ...quiet,
            },
            {
              id: 'stripe',
              match: { path: 'stripe' },
              action: 'agent',
              messageTemplate: '{{type}} for {{data.object.customer_email}}',
              verify: { kind: 'stripe', secret: STRIPE_SECRETS, required: true },
              ...quiet,
            },
            {
              id: 'slack',
              match: { path: 'slack' },
              action: 'agent',
              messageTemplate: 'Slack: {{event.text}}',
              verify: { kind: 'slack', secret: SLACK_SECRET },
              ...quiet,
            },
            {
              id: 'slash',
              match: { path: 'slack-command' },
              action: 'agent',
              messageTemplate: '{{command}} {{text}} from {{user_name}}',
              verify: { kind: 'slack', secret: SLACK_SECRET },
              ...quiet,
            },
            {
              id: 'sw',
              match: { path: 'sw' },
              action: 'wake',
              textTemplate: 'Order {{order}} shipped',
              verify: { kind: 'standard-webhooks', secret: SW_SECRET, publicKey: ed.publicKey },
            },
            {
              id: 'generic',
              match: { path: 'generic' },
              action: 'wake',
              textTemplate: 'Build {{build}} {{status}}',
              verify: {
                kind: 'hmac',
                secret: 'generic-hmac-secret',
                header: 'x-signature',
                encoding: 'base64',
                prefix: 'sha256=',
              },
            },
          ],
        },
      }),
    );
  });
  after(() => gw.stop());

  it('accepts a GitHub delivery signed with X-Hub-Signature-256 and no hook token', async () => {
    const body = readTextFixture('github-pull-request-opened.json');
    const run = await gw.runOf(await postSigned(gw, '/hooks/github', body, signGithub(GITHUB_SECRET, body)));
    assert.match(run.message, /PR /);
    assert.equal(run.source.hook, 'github');
  });

  it('refuses a GitHub delivery whose body was changed after signing', async () => {
    const body = readTextFixture('github-pull-request-opened.json');
    const res = await postSigned(
      gw,
      '/hooks/github',
      body.replace('"opened"', '"closed"'),
      signGithub(GITHUB_SECRET, body),
    );
    assertError(res, 401, 'signature_invalid');
  });

  it('refuses a GitHub delivery signed with another secret', async () => {
    const body = '{"zen":"Keep it logically awesome."}';
    assertError(
      await postSigned(gw, '/hooks/github', body, signGithub('not-the-secret', body)),
      401,
      'signature_invalid',
    );
  });

  it('refuses a request with neither signature nor token', async () => {
    assertError(await postSigned(gw, '/hooks/github', '{"zen":"x"}', {}), 401, 'signature_invalid');
  });

  it("keeps the body of a signed request in its record (recordPayloads), never an unsigned one's", async () => {
    const stranger = '{"zen":"a stranger\'s body, unsigned"}';
    assertError(await postSigned(gw, '/hooks/github', stranger, {}), 401, 'signature_invalid');
    const signed = '{"zen":"signed body"}';
    assert.equal((await postSigned(gw, '/hooks/github', signed, signGithub(GITHUB_SECRET, signed))).status, 202);
    let records: RequestRecord[] = [];
    for (let i = 0; i < 100; i++) {
      records = await gw.gateway.store.listRequests({ hook: 'github', limit: 100 });
      if (
        records.some((r) => r.payload === signed) &&
        records.some((r) => r.status === 401 && r.code === 'signature_invalid')
      )
        break;
      await new Promise((r) => setTimeout(r, 20));
    }
    assert.ok(
      records.some((r) => r.payload === signed),
      'the signed body is kept',
    );
    const refused = records.filter((r) => r.status === 401 && r.code === 'signature_invalid');
    assert.ok(refused.length > 0);
    assert.ok(
      refused.every((r) => r.payload === null),
      JSON.stringify(refused.map((r) => r.payload)),
    );
  });

  it('still accepts the hook token where verify is not required', async () => {
    const res = await send(gw.port, '/hooks/github', { body: { pull_request: { title: 'by token' } } });
    assert.equal((await gw.runOf(res)).message, 'PR by token');
  });

  it('accepts a Stripe event signed with the second secret during a roll', async () => {
    const body = readTextFixture('stripe-invoice-paid.json');
    const run = await gw.runOf(
      await postSigned(gw, '/hooks/stripe', body, signStripe(STRIPE_SECRETS[1]!, body, nowS())),
    );
    assert.equal(run.message, 'invoice.paid for billing@tidewater-labs.example');
  });

  it('refuses a replayed (stale) and a future Stripe event', async () => {
    const body = readTextFixture('stripe-invoice-paid.json');
    assertError(
      await postSigned(gw, '/hooks/stripe', body, signStripe(STRIPE_SECRETS[0]!, body, nowS() - 3600)),
      401,
      'signature_invalid',
    );
    assertError(
      await postSigned(gw, '/hooks/stripe', body, signStripe(STRIPE_SECRETS[0]!, body, nowS() + 3600)),
      401,
      'signature_invalid',
    );
  });

  it('refuses the hook token alone where verify.required is set', async () => {
    const res = await send(gw.port, '/hooks/stripe', { body: { type: 'invoice.paid', data: { object: {} } } });
    assertError(res, 401, 'signature_invalid');
  });

  it("answers Slack's url_verification challenge", async () => {
    const body = readTextFixture('slack-url-verification.json');
    const res = await postSigned(gw, '/hooks/slack', body, signSlack(SLACK_SECRET, body, nowS()));
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.json, { challenge: '3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P' });
  });

  it('does not answer a url_verification challenge that is not signed', async () => {
    const body = readTextFixture('slack-url-verification.json');
    const res = await send(gw.port, '/hooks/slack', { body });
    assert.equal(res.status, 202, 'with the token it is an ordinary payload, not a challenge answer');
  });

  it('accepts a signed Slack event', async () => {
    const body = readTextFixture('slack-event-callback.json');
    const run = await gw.runOf(await postSigned(gw, '/hooks/slack', body, signSlack(SLACK_SECRET, body, nowS())));
    assert.equal(run.message, 'Slack: <@U0LAN0Z89> is the nightly deploy green?');
  });

  it('verifies a form-encoded slash command over its bytes, then reads its fields', async () => {
    const body = readTextFixture('slack-slash-command.txt');
    const headers = signSlack(SLACK_SECRET, body, nowS());
    const run = await gw.runOf(
      await postSigned(gw, '/hooks/slack-command', body, headers, 'application/x-www-form-urlencoded'),
    );
    assert.equal(run.message, '/deploy-status harbor-scheduler production from mara');
    const stale = signSlack(SLACK_SECRET, body, nowS() - 600);
    assertError(
      await postSigned(gw, '/hooks/slack-command', body, stale, 'application/x-www-form-urlencoded'),
      401,
      'signature_invalid',
    );
  });

  it('accepts Standard Webhooks signed with v1 (HMAC) and with v1a (Ed25519)', async () => {
    const body = '{"type":"order.shipped","order":"A-1009"}';
    const hmacEvent = await gw.eventOf(
      await postSigned(gw, '/hooks/sw', body, signStandardWebhooks(SW_SECRET, body, nowS(), 'msg_01')),
    );
    assert.equal(hmacEvent.text.includes('Order A-1009 shipped'), true);
    const edEvent = await gw.eventOf(
      await postSigned(gw, '/hooks/sw', body, signStandardWebhooksEd25519(ed.privateKey, body, nowS(), 'msg_02')),
    );
    assert.equal(edEvent.text.includes('Order A-1009 shipped'), true);
    const wrongKey = signStandardWebhooksEd25519(createEd25519Keys().privateKey, body, nowS());
    assertError(await postSigned(gw, '/hooks/sw', body, wrongKey), 401, 'signature_invalid');
  });

  it('accepts a generic HMAC signature and refuses a tampered one', async () => {
    const body = '{"build":"1234","status":"passed"}';
    const headers = signHmac('generic-hmac-secret', body, {
      header: 'x-signature',
      encoding: 'base64',
      prefix: 'sha256=',
    });
    assert.equal((await postSigned(gw, '/hooks/generic', body, headers)).status, 200);
    assertError(
      await postSigned(gw, '/hooks/generic', body.replace('passed', 'failed'), headers),
      401,
      'signature_invalid',
    );
  });

  it('never accepts a signature on the built-in endpoints', async () => {
    const body = '{"text":"x"}';
    assertError(await postSigned(gw, '/hooks/wake', body, signGithub(GITHUB_SECRET, body)), 401, 'unauthorized');
  });

  it('never writes a verify secret to the log', () => {
    const all = gw.logLines.join('');
    for (const secret of [GITHUB_SECRET, SLACK_SECRET, ...STRIPE_SECRETS, SW_SECRET, 'generic-hmac-secret'])
      assert.equal(all.includes(secret), false, secret);
  });
});

describe('mapped hooks: a bad signature counts toward the lockout', () => {
  let gw: MappedGateway;
  before(async () => {
    gw = await startMappedGateway(
      baseConfig({
        hooks: {
          enabled: true,
          token: HOOK_TOKEN,
          authRateLimit: { maxFailures: 3, windowSeconds: 60, lockoutSeconds: 60 },
          mappings: [
            {
              id: 'github',
              match: { path: 'github' },
              action: 'wake',
              verify: { kind: 'github', secret: GITHUB_SECRET },
            },
          ],
        },
      }),
    );
  });
  after(() => gw.stop());

  it('locks the client out after repeated bad signatures, even a correctly signed one', async () => {
    const body = '{"text":"hello"}';
    for (let i = 0; i < 3; i++)
      assertError(await postSigned(gw, '/hooks/github', body, signGithub('guess', body)), 401, 'signature_invalid');
    const res = await postSigned(gw, '/hooks/github', body, signGithub(GITHUB_SECRET, body));
    assertError(res, 429, 'rate_limited');
    assert.ok(Number(res.headers['retry-after']) > 0);
  });
});
