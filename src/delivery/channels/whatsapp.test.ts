import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  createFakeWhatsApp,
  whatsappError,
  whatsappPairRateLimit,
  whatsappThroughputLimit,
  type FakeWhatsApp,
} from '../../../test/fakes/fake-whatsapp.js';
import { splitMessage } from '../split-message.js';
import { rejects, closedPortUrl, signal, words } from '../../../test/fakes/channel-test-kit.js';
import { createWhatsAppChannel, WHATSAPP_MAX_MESSAGE_CHARS } from './whatsapp.js';

const TOKEN = 'EAAGm0PX4ZCpsBAKZCfakeTokenForTests';
const PHONE_ID = '106540352242922';
const USER = '+15551234567';

describe('whatsapp channel against a fake Cloud API', () => {
  let fake: FakeWhatsApp;
  before(async () => {
    fake = await createFakeWhatsApp({ accessToken: TOKEN, phoneNumberId: PHONE_ID, allowedRecipients: [USER] });
  });
  after(() => fake.close());
  const adapter = (accessToken = TOKEN) =>
    createWhatsAppChannel({ accessToken, phoneNumberId: PHONE_ID, baseUrl: `${fake.url}/v21.0` });

  it('posts a text message with the bearer token to /{phoneNumberId}/messages', async () => {
    await adapter().send(USER, 'Order #1001 shipped: https://example.com/t/1001', signal());
    const req = fake.requests.at(-1)!;
    assert.equal(req.method, 'POST');
    assert.equal(req.path, `/v21.0/${PHONE_ID}/messages`);
    assert.equal(req.headers.authorization, `Bearer ${TOKEN}`);
    assert.deepEqual(req.body, {
      messaging_product: 'whatsapp',
      recipient_type: 'individual',
      to: USER,
      type: 'text',
      text: { preview_url: false, body: 'Order #1001 shipped: https://example.com/t/1001' },
    });
    assert.deepEqual(fake.messages.at(-1), { to: USER, text: 'Order #1001 shipped: https://example.com/t/1001' });
  });

  it('fails without retry on a recipient outside the allowed list, quoting Meta', async () => {
    const e = await rejects(adapter().send('+15550000000', 'hi', signal()));
    assert.equal(e.code, 'delivery_failed');
    assert.equal(e.status, 400);
    assert.equal(e.retryable, false);
    assert.match(
      e.message,
      /^whatsapp 400: \(#131030\) Recipient phone number not in allowed list: .*\[code 131030\]$/,
    );
  });

  it('fails without retry on an invalid access token (401, code 190)', async () => {
    const e = await rejects(adapter('EAAwrong').send(USER, 'hi', signal()));
    assert.equal(e.status, 401);
    assert.equal(e.retryable, false);
    assert.match(e.message, /Invalid OAuth access token.*\[code 190\]/);
  });

  it('is retryable on 429 and carries Retry-After', async () => {
    fake.script.push(whatsappThroughputLimit(429, { 'retry-after': '12' }));
    const e = await rejects(adapter().send(USER, 'hi', signal()));
    assert.equal(e.status, 429);
    assert.equal(e.retryable, true);
    assert.equal(e.retryAfterMs, 12_000);
    assert.match(e.message, /Rate limit hit/);
  });

  it('is retryable on a throttling code Meta sends with HTTP 400', async () => {
    fake.script.push(whatsappThroughputLimit());
    const e = await rejects(adapter().send(USER, 'hi', signal()));
    assert.equal(e.status, 400);
    assert.equal(e.retryable, true);
    assert.equal(e.retryAfterMs, undefined);
  });

  it('waits at least the pair-rate interval after 131056', async () => {
    fake.script.push(whatsappPairRateLimit());
    const e = await rejects(adapter().send(USER, 'hi', signal()));
    assert.equal(e.retryable, true);
    assert.equal(e.retryAfterMs, 6000);
    assert.match(e.message, /pair rate limit hit/);
  });

  it('is retryable on 5xx', async () => {
    fake.script.push(
      whatsappError(500, {
        code: 131000,
        message: '(#131000) Something went wrong',
        details: 'Message failed to send due to an unknown error.',
      }),
    );
    const e = await rejects(adapter().send(USER, 'hi', signal()));
    assert.equal(e.status, 500);
    assert.equal(e.retryable, true);
    assert.match(e.message, /Something went wrong/);
  });

  it('is retryable when nothing listens', async () => {
    const a = createWhatsAppChannel({ accessToken: TOKEN, phoneNumberId: PHONE_ID, baseUrl: await closedPortUrl() });
    const e = await rejects(a.send(USER, 'hi', signal()));
    assert.equal(e.retryable, true);
    assert.equal(e.status, undefined);
  });

  it('sends an over-limit reply as parts that all fit and join back', async () => {
    const text = words(WHATSAPP_MAX_MESSAGE_CHARS + 1000);
    const e = await rejects(adapter().send(USER, text, signal()));
    assert.equal(e.retryable, false);
    assert.match(e.message, /at most 4096 characters/);
    const parts = splitMessage(text, adapter().maxMessageChars);
    assert.equal(parts.length, 2);
    const before = fake.messages.length;
    for (const part of parts) await adapter().send(USER, part, signal());
    assert.equal(
      fake.messages
        .slice(before)
        .map((m) => m.text)
        .join(''),
      text,
    );
  });

  it('gives up on a slow answer when the signal fires', async () => {
    fake.script.push({
      status: 200,
      body: { messaging_product: 'whatsapp', contacts: [], messages: [] },
      delayMs: 2000,
    });
    const started = Date.now();
    const e = await rejects(adapter().send(USER, 'hi', AbortSignal.timeout(50)));
    assert.equal(e.retryable, true);
    assert.match(e.message, /timed out/);
    assert.ok(Date.now() - started < 1500);
  });
});
