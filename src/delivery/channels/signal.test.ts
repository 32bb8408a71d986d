import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createFakeSignal, signalError, signalRateLimit, type FakeSignal } from '../../../test/fakes/fake-signal.js';
import { splitMessage } from '../split-message.js';
import { rejects, closedPortUrl, signal, words } from '../../../test/fakes/channel-test-kit.js';
import { createSignalChannel, SIGNAL_MAX_MESSAGE_CHARS } from './signal.js';

const ACCOUNT = '+4915112345678';
const FRIEND = '+15551234567';

describe('signal channel against a fake signal-cli REST API', () => {
  let fake: FakeSignal;
  before(async () => {
    fake = await createFakeSignal({ account: ACCOUNT, registered: [FRIEND] });
  });
  after(() => fake.close());
  const adapter = (account = ACCOUNT) => createSignalChannel({ baseUrl: `${fake.url}/`, account });

  it('posts {message, number, recipients} to /v2/send and the message arrives', async () => {
    await adapter().send(FRIEND, 'Deploy finished', signal());
    const req = fake.requests.at(-1)!;
    assert.equal(req.method, 'POST');
    assert.equal(req.path, '/v2/send');
    assert.match(String(req.headers['content-type']), /^application\/json/);
    assert.deepEqual(req.body, { message: 'Deploy finished', number: ACCOUNT, recipients: [FRIEND] });
    assert.deepEqual(fake.messages.at(-1), { to: FRIEND, text: 'Deploy finished' });
  });

  it('fails without retry on an unregistered recipient, quoting signal-cli', async () => {
    const e = await rejects(adapter().send('+15550000000', 'hi', signal()));
    assert.equal(e.code, 'delivery_failed');
    assert.equal(e.status, 400);
    assert.equal(e.retryable, false);
    assert.match(e.message, /^signal 400: The user \+15550000000 is not registered\.$/);
  });

  it('fails without retry when the account is not the one signal-cli has registered', async () => {
    const e = await rejects(adapter('+4915199999999').send(FRIEND, 'hi', signal()));
    assert.equal(e.retryable, false);
    assert.match(e.message, /User \+4915199999999 is not registered/);
  });

  it('is retryable on 429 and carries Retry-After', async () => {
    fake.script.push(signalRateLimit(ACCOUNT, { 'retry-after': '30' }));
    const e = await rejects(adapter().send(FRIEND, 'hi', signal()));
    assert.equal(e.status, 429);
    assert.equal(e.retryable, true);
    assert.equal(e.retryAfterMs, 30_000);
    assert.match(e.message, /rate limiting/);
  });

  it('is retryable on 5xx', async () => {
    fake.script.push(signalError(502, 'Bad Gateway'));
    const e = await rejects(adapter().send(FRIEND, 'hi', signal()));
    assert.equal(e.status, 502);
    assert.equal(e.retryable, true);
    assert.equal(e.retryAfterMs, undefined);
  });

  it('is retryable when nothing listens', async () => {
    const a = createSignalChannel({ baseUrl: await closedPortUrl(), account: ACCOUNT });
    const e = await rejects(a.send(FRIEND, 'hi', signal()));
    assert.equal(e.retryable, true);
    assert.equal(e.status, undefined);
  });

  it('treats a 201 that lists the recipient as failed as a failure', async () => {
    fake.script.push({
      status: 201,
      body: { timestamp: '1700000000000', errors: { recipients: [{ number: FRIEND, reason: 'NETWORK_FAILURE' }] } },
    });
    const e = await rejects(adapter().send(FRIEND, 'hi', signal()));
    assert.equal(e.retryable, true);
    assert.match(e.message, /not delivered to \+15551234567: NETWORK_FAILURE/);
    fake.script.push({
      status: 201,
      body: {
        timestamp: '1700000000001',
        errors: { recipients: [{ number: FRIEND, reason: 'UNREGISTERED_FAILURE' }] },
      },
    });
    assert.equal((await rejects(adapter().send(FRIEND, 'hi', signal()))).retryable, false);
  });

  it('sends an over-limit reply as parts that all fit and join back', async () => {
    const text = words(SIGNAL_MAX_MESSAGE_CHARS * 2 + 500);
    const e = await rejects(adapter().send(FRIEND, text, signal()));
    assert.equal(e.retryable, false);
    const parts = splitMessage(text, adapter().maxMessageChars);
    assert.equal(parts.length, 3);
    const before = fake.messages.length;
    for (const part of parts) await adapter().send(FRIEND, part, signal());
    assert.equal(
      fake.messages
        .slice(before)
        .map((m) => m.text)
        .join(''),
      text,
    );
  });

  it('gives up on a slow answer when the signal fires', async () => {
    fake.script.push({ status: 201, body: { timestamp: '1700000000000' }, delayMs: 2000 });
    const started = Date.now();
    const e = await rejects(adapter().send(FRIEND, 'hi', AbortSignal.timeout(50)));
    assert.equal(e.retryable, true);
    assert.match(e.message, /timed out/);
    assert.ok(Date.now() - started < 1500);
  });
});
