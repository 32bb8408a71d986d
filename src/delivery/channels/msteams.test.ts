import { describe, it, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import {
  CONNECTOR_UNAUTHORIZED,
  connectorError,
  createFakeMsTeams,
  tokenAnswer,
  type FakeMsTeams,
} from '../../../test/fakes/fake-msteams.js';
import { splitMessage } from '../split-message.js';
import { rejects, closedPortUrl, signal, words } from '../../../test/fakes/channel-test-kit.js';
import { createMsTeamsChannel, MSTEAMS_MAX_MESSAGE_CHARS } from './msteams.js';

const APP_ID = '2f1c7a52-8a9e-4b8e-9d2a-6c1f0e3b7a10';
const APP_PASSWORD = 'Qx~8Q~fakeSecretValueForTests.abc123';
const CHANNEL = '19:a1b2c3d4e5f64718293a4b5c6d7e8f90@thread.tacv2;messageid=1700000000000';
const CHAT = 'a:1Xk2fakePersonalChatId';

describe('msteams channel against a fake Entra ID + Bot Connector', () => {
  let fake: FakeMsTeams;
  let clock = 1_700_000_000_000;
  const now = (): number => clock;
  before(async () => {
    fake = await createFakeMsTeams({ appId: APP_ID, appPassword: APP_PASSWORD, conversations: [CHANNEL, CHAT], now });
  });
  beforeEach(() => {
    clock += 24 * 3600_000; // every test starts after all earlier tokens expired
  });
  after(() => fake.close());
  const adapter = (appPassword = APP_PASSWORD) =>
    createMsTeamsChannel(
      {
        appId: APP_ID,
        appPassword,
        serviceUrl: `${fake.url}/amer/`,
        tokenUrl: `${fake.url}/botframework.com/oauth2/v2.0/token`,
      },
      { now },
    );
  const activityRequests = (): number => fake.requests.filter((r) => r.path.includes('/v3/conversations/')).length;

  it('gets a client-credentials token, then posts a markdown activity with it', async () => {
    await adapter().send(CHANNEL, '**Build 42** passed', signal());
    const [tokenReq, activityReq] = fake.requests.slice(-2);
    assert.equal(tokenReq!.path, '/botframework.com/oauth2/v2.0/token');
    assert.match(String(tokenReq!.headers['content-type']), /^application\/x-www-form-urlencoded/);
    assert.deepEqual(Object.fromEntries(new URLSearchParams(String(tokenReq!.body))), {
      grant_type: 'client_credentials',
      client_id: APP_ID,
      client_secret: APP_PASSWORD,
      scope: 'https://api.botframework.com/.default',
    });
    assert.equal(activityReq!.path, `/amer/v3/conversations/${encodeURIComponent(CHANNEL)}/activities`);
    assert.match(String(activityReq!.headers.authorization), /^Bearer eyJ/);
    assert.deepEqual(activityReq!.body, { type: 'message', text: '**Build 42** passed', textFormat: 'markdown' });
    assert.deepEqual(fake.messages.at(-1), { to: CHANNEL, text: '**Build 42** passed', textFormat: 'markdown' });
  });

  it('fetches the token once and reuses it for several sends', async () => {
    const a = adapter();
    const before = fake.tokenRequests();
    await a.send(CHANNEL, 'one', signal());
    clock += 30 * 60_000;
    await a.send(CHAT, 'two', signal());
    await a.send(CHANNEL, 'three', signal());
    assert.equal(fake.tokenRequests() - before, 1);
    assert.deepEqual(
      fake.messages.slice(-3).map((m) => m.text),
      ['one', 'two', 'three'],
    );
  });

  it('shares one token request between concurrent first sends', async () => {
    const a = adapter();
    const before = fake.tokenRequests();
    await Promise.all([a.send(CHANNEL, 'x', signal()), a.send(CHAT, 'y', signal()), a.send(CHANNEL, 'z', signal())]);
    assert.equal(fake.tokenRequests() - before, 1);
  });

  it('refreshes the token shortly before it expires', async () => {
    const a = adapter();
    const before = fake.tokenRequests();
    await a.send(CHANNEL, 'one', signal());
    clock += 3599_000 - 4 * 60_000; // inside the 5-minute margin, still valid at the fake
    await a.send(CHANNEL, 'two', signal());
    assert.equal(fake.tokenRequests() - before, 2);
  });

  it('refreshes the token after it expired', async () => {
    const a = adapter();
    const before = fake.tokenRequests();
    await a.send(CHANNEL, 'one', signal());
    clock += 2 * 3600_000;
    const activitiesBefore = activityRequests();
    await a.send(CHANNEL, 'two', signal());
    assert.equal(fake.tokenRequests() - before, 2);
    assert.equal(activityRequests() - activitiesBefore, 1, 'no 401 round trip');
  });

  it('drops a revoked token on 401 and retries once with a fresh one', async () => {
    const a = adapter();
    await a.send(CHANNEL, 'one', signal());
    fake.revokeTokens();
    const tokensBefore = fake.tokenRequests();
    const activitiesBefore = activityRequests();
    await a.send(CHANNEL, 'after revoke', signal());
    assert.equal(fake.tokenRequests() - tokensBefore, 1);
    assert.equal(activityRequests() - activitiesBefore, 2);
    assert.equal(fake.messages.at(-1)!.text, 'after revoke');
  });

  it('retries a 401 only once, then fails without retry', async () => {
    const a = adapter();
    await a.send(CHANNEL, 'one', signal());
    // The cached token is refused, the fresh one (unknown to the connector) is refused too.
    fake.script.push(CONNECTOR_UNAUTHORIZED, tokenAnswer('eyJunknown.token.value'));
    const tokensBefore = fake.tokenRequests();
    const activitiesBefore = activityRequests();
    const e = await rejects(a.send(CHANNEL, 'hi', signal()));
    assert.equal(e.status, 401);
    assert.equal(e.retryable, false);
    assert.equal(e.message, 'msteams 401: Authorization has been denied for this request.');
    assert.equal(fake.tokenRequests() - tokensBefore, 1);
    assert.equal(activityRequests() - activitiesBefore, 2);
  });

  it('does not retry a 401 that a freshly fetched token got', async () => {
    fake.script.push(tokenAnswer('eyJunknown.token.value'));
    const activitiesBefore = activityRequests();
    const e = await rejects(adapter().send(CHANNEL, 'hi', signal()));
    assert.equal(e.status, 401);
    assert.equal(activityRequests() - activitiesBefore, 1);
  });

  it('fails without retry on a wrong app password, quoting Entra ID', async () => {
    const activitiesBefore = activityRequests();
    const e = await rejects(adapter('wrong-secret').send(CHANNEL, 'hi', signal()));
    assert.equal(e.code, 'delivery_failed');
    assert.equal(e.status, 401);
    assert.equal(e.retryable, false);
    assert.match(
      e.message,
      /^msteams 401: token request failed: invalid_client: AADSTS7000215: Invalid client secret provided\. .*'\.$/,
    );
    assert.equal(activityRequests(), activitiesBefore);
  });

  it('fails without retry on a 200 token answer that holds no token', async () => {
    // e.g. tokenUrl pointing at some other service that answers 200.
    fake.script.push({ status: 200, body: { ok: true } });
    const e = await rejects(adapter().send(CHANNEL, 'hi', signal()));
    assert.equal(e.retryable, false);
    assert.match(e.message, /token answer has no access_token/);
  });

  it('fails without retry on an unknown conversation, quoting the connector', async () => {
    const e = await rejects(adapter().send('19:nosuchchannel@thread.tacv2', 'hi', signal()));
    assert.equal(e.status, 404);
    assert.equal(e.retryable, false);
    assert.equal(e.message, 'msteams 404: ConversationNotFound: Conversation not found.');
  });

  it('is retryable on 429 and carries Retry-After', async () => {
    const a = adapter();
    await a.send(CHANNEL, 'warm the token', signal());
    fake.script.push(connectorError(429, 'Throttled', 'Too many requests', { 'retry-after': '3' }));
    const e = await rejects(a.send(CHANNEL, 'hi', signal()));
    assert.equal(e.status, 429);
    assert.equal(e.retryable, true);
    assert.equal(e.retryAfterMs, 3000);
    assert.match(e.message, /Throttled: Too many requests/);
  });

  it('is retryable on 5xx from the connector or the token endpoint', async () => {
    const a = adapter();
    fake.script.push({
      status: 503,
      body: {
        error: 'temporarily_unavailable',
        error_description: 'AADSTS90033: A transient error has occurred. Please try again.',
      },
    });
    const tokenError = await rejects(a.send(CHANNEL, 'hi', signal()));
    assert.equal(tokenError.status, 503);
    assert.equal(tokenError.retryable, true);
    assert.match(tokenError.message, /token request failed: temporarily_unavailable: AADSTS90033/);
    await a.send(CHANNEL, 'warm the token', signal());
    fake.script.push(connectorError(502, 'ServiceError', 'Unknown error'));
    const e = await rejects(a.send(CHANNEL, 'hi', signal()));
    assert.equal(e.status, 502);
    assert.equal(e.retryable, true);
  });

  it('is retryable when nothing listens', async () => {
    const url = await closedPortUrl();
    const a = createMsTeamsChannel(
      { appId: APP_ID, appPassword: APP_PASSWORD, serviceUrl: url, tokenUrl: `${url}/t/oauth2/v2.0/token` },
      { now },
    );
    const e = await rejects(a.send(CHANNEL, 'hi', signal()));
    assert.equal(e.retryable, true);
    assert.equal(e.status, undefined);
  });

  it('sends an over-limit reply as parts that all fit and join back', async () => {
    const a = adapter();
    const text = words(30_000);
    const e = await rejects(a.send(CHANNEL, text, signal()));
    assert.equal(e.status, 413);
    assert.equal(e.retryable, false);
    assert.match(e.message, /MessageSizeTooBig/);
    const parts = splitMessage(text, a.maxMessageChars);
    assert.equal(parts.length, 4);
    const before = fake.messages.length;
    for (const part of parts) await a.send(CHANNEL, part, signal());
    assert.equal(
      fake.messages
        .slice(before)
        .map((m) => m.text)
        .join(''),
      text,
    );
  });

  it('keeps a full part of 3-byte characters under the activity size limit', async () => {
    const cjk = '漢字かな交じり文'.repeat(MSTEAMS_MAX_MESSAGE_CHARS / 8);
    assert.equal(cjk.length, MSTEAMS_MAX_MESSAGE_CHARS);
    await adapter().send(CHAT, cjk, signal());
    assert.equal(fake.messages.at(-1)!.text, cjk);
  });

  it('gives up on a slow answer when the signal fires', async () => {
    const a = adapter();
    await a.send(CHANNEL, 'warm the token', signal());
    fake.script.push({ status: 201, body: { id: '1' }, delayMs: 2000 });
    const started = Date.now();
    const e = await rejects(a.send(CHANNEL, 'hi', AbortSignal.timeout(50)));
    assert.equal(e.retryable, true);
    assert.match(e.message, /timed out/);
    assert.ok(Date.now() - started < 1500);
  });
});
