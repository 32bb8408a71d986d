import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { blueBubblesError, createFakeIMessage, type FakeIMessage } from '../../../test/fakes/fake-imessage.js';
import { splitMessage } from '../split-message.js';
import { rejects, closedPortUrl, signal, words } from '../../../test/fakes/channel-test-kit.js';
import { createIMessageChannel, IMESSAGE_MAX_MESSAGE_CHARS, toChatGuid } from './imessage.js';

const PASSWORD = 'correct horse battery staple';
const PHONE = '+15551234567';
const NOT_ON_IMESSAGE = '+15550000000';

describe('toChatGuid', () => {
  const cases: Array<[string, string]> = [
    ['+15551234567', 'iMessage;-;+15551234567'],
    ['  alice@example.com ', 'iMessage;-;alice@example.com'],
    ['iMessage;-;+15551234567', 'iMessage;-;+15551234567'],
    ['SMS;-;+15551234567', 'SMS;-;+15551234567'],
    ['iMessage;+;chat123456789012345678', 'iMessage;+;chat123456789012345678'],
  ];
  for (const [to, guid] of cases) it(`${JSON.stringify(to)} -> ${guid}`, () => assert.equal(toChatGuid(to), guid));
});

describe('imessage channel against a fake BlueBubbles server', () => {
  let fake: FakeIMessage;
  before(async () => {
    fake = await createFakeIMessage({ password: PASSWORD, unreachable: [NOT_ON_IMESSAGE] });
  });
  after(() => fake.close());
  let n = 0;
  const adapter = (password = PASSWORD) =>
    createIMessageChannel({ baseUrl: `${fake.url}/`, password }, { newTempGuid: () => `temp-${++n}` });
  const lastBody = (): Record<string, unknown> => fake.requests.at(-1)!.body as Record<string, unknown>;

  it('posts {chatGuid, tempGuid, message, method} with the password in the query', async () => {
    await adapter().send(PHONE, 'Your table is ready', signal());
    const req = fake.requests.at(-1)!;
    assert.equal(req.method, 'POST');
    const url = new URL(req.path, 'http://x');
    assert.equal(url.pathname, '/api/v1/message/text');
    assert.equal(url.searchParams.get('password'), PASSWORD);
    assert.deepEqual(req.body, {
      chatGuid: `iMessage;-;${PHONE}`,
      tempGuid: `temp-${n}`,
      message: 'Your table is ready',
      method: 'apple-script',
    });
    assert.deepEqual(fake.messages.at(-1), { to: `iMessage;-;${PHONE}`, text: 'Your table is ready' });
  });

  it('sends to a group chat GUID as given', async () => {
    await adapter().send('iMessage;+;chat123456789012345678', 'hello all', signal());
    assert.deepEqual(fake.messages.at(-1), { to: 'iMessage;+;chat123456789012345678', text: 'hello all' });
  });

  it('uses a fresh tempGuid for every send by default', async () => {
    const a = createIMessageChannel({ baseUrl: fake.url, password: PASSWORD });
    await a.send(PHONE, 'one', signal());
    const first = lastBody()['tempGuid'];
    await a.send(PHONE, 'two', signal());
    const second = lastBody()['tempGuid'];
    assert.equal(typeof first, 'string');
    assert.notEqual(first, second);
  });

  it('fails without retry when Messages cannot deliver to the address', async () => {
    const e = await rejects(adapter().send(NOT_ON_IMESSAGE, 'hi', signal()));
    assert.equal(e.code, 'delivery_failed');
    assert.equal(e.status, 500);
    assert.equal(e.retryable, false);
    assert.equal(
      e.message,
      'imessage 500: Message Send Error: Failed to send message! See attached message error code. (Messages error 22)',
    );
  });

  it('fails without retry on a request the server refuses (400), quoting its reason', async () => {
    const e = await rejects(adapter().send(PHONE, '', signal()));
    assert.equal(e.status, 400);
    assert.equal(e.retryable, false);
    assert.match(e.message, /A 'message' is required when sending via AppleScript/);
  });

  it('fails without retry on a wrong password, without quoting it', async () => {
    const e = await rejects(adapter('wrong password').send(PHONE, 'hi', signal()));
    assert.equal(e.status, 401);
    assert.equal(e.retryable, false);
    assert.equal(e.message, 'imessage 401: You are not authorized to access this resource: Unauthorized');
  });

  it('is retryable on 429 and carries Retry-After', async () => {
    // BlueBubbles does not rate-limit; a reverse proxy in front of it may.
    fake.script.push({ status: 429, body: 'Too Many Requests', headers: { 'retry-after': '5' } });
    const e = await rejects(adapter().send(PHONE, 'hi', signal()));
    assert.equal(e.status, 429);
    assert.equal(e.retryable, true);
    assert.equal(e.retryAfterMs, 5000);
  });

  it('is retryable on a 5xx without a failed message (send timeout)', async () => {
    fake.script.push(
      blueBubblesError(
        500,
        'Message Send Error',
        { type: 'iMessage Error', message: 'Message send timeout' },
        { data: null },
      ),
    );
    const e = await rejects(adapter().send(PHONE, 'hi', signal()));
    assert.equal(e.status, 500);
    assert.equal(e.retryable, true);
    assert.match(e.message, /Message send timeout/);
  });

  it('is retryable when nothing listens', async () => {
    const a = createIMessageChannel({ baseUrl: await closedPortUrl(), password: PASSWORD });
    const e = await rejects(a.send(PHONE, 'hi', signal()));
    assert.equal(e.retryable, true);
    assert.equal(e.status, undefined);
    assert.doesNotMatch(e.message, /horse/);
  });

  it('sends an over-limit reply as parts that all fit and join back', async () => {
    const text = words(IMESSAGE_MAX_MESSAGE_CHARS * 2 + 10);
    const e = await rejects(adapter().send(PHONE, text, signal()));
    assert.equal(e.retryable, false);
    const parts = splitMessage(text, adapter().maxMessageChars);
    assert.equal(parts.length, 3);
    const before = fake.messages.length;
    for (const part of parts) await adapter().send(PHONE, part, signal());
    assert.equal(
      fake.messages
        .slice(before)
        .map((m) => m.text)
        .join(''),
      text,
    );
  });

  it('gives up on a slow answer when the signal fires', async () => {
    fake.script.push({ status: 200, body: { status: 200, message: 'Message sent!', data: {} }, delayMs: 2000 });
    const started = Date.now();
    const e = await rejects(adapter().send(PHONE, 'hi', AbortSignal.timeout(50)));
    assert.equal(e.retryable, true);
    assert.match(e.message, /timed out/);
    assert.ok(Date.now() - started < 1500);
  });
});
