import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  createFakeTelegram,
  telegramError,
  telegramRateLimit,
  type FakeTelegram,
} from '../../../test/fakes/fake-telegram.js';
import { splitMessage } from '../split-message.js';
import { rejects, closedPortUrl, signal, words } from '../../../test/fakes/channel-test-kit.js';
import { createTelegramChannel } from './telegram.js';

const TOKEN = '123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw';
const CHAT = '-1001234567890';

describe('telegram channel against a fake Bot API', () => {
  let fake: FakeTelegram;
  before(async () => {
    fake = await createFakeTelegram({ botToken: TOKEN, chatIds: [CHAT, '@hookgate_news'] });
  });
  after(() => fake.close());
  const adapter = (botToken = TOKEN) => createTelegramChannel({ botToken, baseUrl: fake.url });

  it('posts {chat_id, text} with the link preview off to /bot<token>/sendMessage and the message arrives', async () => {
    await adapter().send(CHAT, 'Build #42 passed', signal());
    const req = fake.requests.at(-1)!;
    assert.equal(req.method, 'POST');
    assert.equal(req.path, `/bot${TOKEN}/sendMessage`);
    assert.match(String(req.headers['content-type']), /^application\/json/);
    assert.deepEqual(req.body, {
      chat_id: CHAT,
      text: 'Build #42 passed',
      link_preview_options: { is_disabled: true },
    });
    assert.deepEqual(fake.messages.at(-1), { to: CHAT, text: 'Build #42 passed' });
  });

  it('accepts a channel @username as the chat', async () => {
    await adapter().send('@hookgate_news', 'hello channel', signal());
    assert.deepEqual(fake.messages.at(-1), { to: '@hookgate_news', text: 'hello channel' });
  });

  it('fails without retry on an unknown chat, quoting the API description', async () => {
    const e = await rejects(adapter().send('987654321', 'hi', signal()));
    assert.equal(e.code, 'delivery_failed');
    assert.equal(e.status, 400);
    assert.equal(e.retryable, false);
    assert.match(e.message, /^telegram 400: Bad Request: chat not found$/);
  });

  it('fails without retry on a wrong bot token (401), never quoting the token', async () => {
    const e = await rejects(adapter('123456789:wrong-token').send(CHAT, 'hi', signal()));
    assert.equal(e.status, 401);
    assert.equal(e.retryable, false);
    assert.match(e.message, /Unauthorized/);
    assert.doesNotMatch(e.message, /wrong-token/);
  });

  it('names the new chat id when a group was upgraded to a supergroup', async () => {
    fake.script.push(
      telegramError(400, 'Bad Request: group chat was upgraded to a supergroup chat', {
        migrate_to_chat_id: -1009876543210,
      }),
    );
    const e = await rejects(adapter().send(CHAT, 'hi', signal()));
    assert.equal(e.retryable, false);
    assert.match(e.message, /upgraded to a supergroup chat \(migrate_to_chat_id -1009876543210\)/);
  });

  it('retries 429 after parameters.retry_after seconds', async () => {
    fake.script.push(telegramRateLimit(7));
    const e = await rejects(adapter().send(CHAT, 'hi', signal()));
    assert.equal(e.status, 429);
    assert.equal(e.retryable, true);
    assert.equal(e.retryAfterMs, 7000);
    assert.match(e.message, /Too Many Requests: retry after 7/);
  });

  it('retries 5xx', async () => {
    fake.script.push(telegramError(502, 'Bad Gateway'));
    const e = await rejects(adapter().send(CHAT, 'hi', signal()));
    assert.equal(e.status, 502);
    assert.equal(e.retryable, true);
    assert.equal(e.retryAfterMs, undefined);
  });

  it('retries a network failure', async () => {
    const channel = createTelegramChannel({ botToken: TOKEN, baseUrl: await closedPortUrl() });
    const e = await rejects(channel.send(CHAT, 'hi', signal()));
    assert.equal(e.retryable, true);
    assert.equal(e.status, undefined);
  });

  it('has the real limit: the API refuses one char more, takes exactly maxMessageChars', async () => {
    const channel = adapter();
    assert.equal(channel.maxMessageChars, 4096);
    const e = await rejects(channel.send(CHAT, 'x'.repeat(channel.maxMessageChars + 1), signal()));
    assert.equal(e.retryable, false);
    assert.match(e.message, /message is too long/);
    await channel.send(CHAT, 'x'.repeat(channel.maxMessageChars), signal());
    assert.equal(fake.messages.at(-1)!.text.length, channel.maxMessageChars);
  });

  it('delivers a long reply split with splitMessage, every part accepted, joined back whole', async () => {
    const channel = adapter();
    const text = words(channel.maxMessageChars * 2 + 500);
    const before = fake.messages.length;
    const parts = splitMessage(text, channel.maxMessageChars);
    assert.ok(parts.length >= 3);
    for (const part of parts) await channel.send(CHAT, part, signal());
    const got = fake.messages.slice(before).map((m) => m.text);
    assert.equal(got.length, parts.length);
    assert.equal(got.join(''), text);
  });

  it('gives up on a slow answer when the signal aborts', async () => {
    fake.script.push({ status: 200, body: { ok: true, result: { message_id: 1 } }, delayMs: 5000 });
    const started = Date.now();
    const e = await rejects(adapter().send(CHAT, 'hi', AbortSignal.timeout(50)));
    assert.equal(e.retryable, true);
    assert.match(e.message, /timed out/);
    assert.ok(Date.now() - started < 2000);
  });
});
