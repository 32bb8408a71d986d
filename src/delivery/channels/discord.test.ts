import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  createFakeDiscord,
  discordError,
  discordRateLimit,
  type FakeDiscord,
} from '../../../test/fakes/fake-discord.js';
import { splitMessage } from '../split-message.js';
import { rejects, closedPortUrl, signal, words } from '../../../test/fakes/channel-test-kit.js';
import { createDiscordChannel } from './discord.js';

const TOKEN = 'MTEwMDAwMDAwMDAwMDAwMDAwMQ.GhJkLm.fake-bot-token-for-tests';
const CHANNEL = '1234567890123456789';

describe('discord channel against a fake REST API', () => {
  let fake: FakeDiscord;
  before(async () => {
    fake = await createFakeDiscord({ botToken: TOKEN, channelIds: [CHANNEL] });
  });
  after(() => fake.close());
  const adapter = (botToken = TOKEN) => createDiscordChannel({ botToken, baseUrl: fake.url });

  it('posts {content} with embeds suppressed to /channels/{id}/messages as the bot, and the message arrives', async () => {
    await adapter().send(CHANNEL, 'Build #42 passed', signal());
    const req = fake.requests.at(-1)!;
    assert.equal(req.method, 'POST');
    assert.equal(req.path, `/channels/${CHANNEL}/messages`);
    assert.equal(req.headers.authorization, `Bot ${TOKEN}`);
    assert.match(String(req.headers['user-agent']), /^DiscordBot \(/);
    assert.match(String(req.headers['content-type']), /^application\/json/);
    assert.deepEqual(req.body, { content: 'Build #42 passed', allowed_mentions: { parse: [] }, flags: 1 << 2 });
    assert.deepEqual(fake.messages.at(-1), { to: CHANNEL, text: 'Build #42 passed' });
  });

  it('fails without retry on an unknown channel, quoting message and code', async () => {
    const e = await rejects(adapter().send('1234567890123456000', 'hi', signal()));
    assert.equal(e.code, 'delivery_failed');
    assert.equal(e.status, 404);
    assert.equal(e.retryable, false);
    assert.equal(e.message, 'discord 404: Unknown Channel (code 10003)');
  });

  it('names the field of an Invalid Form Body error', async () => {
    const e = await rejects(adapter().send('general', 'hi', signal()));
    assert.equal(e.status, 400);
    assert.equal(e.retryable, false);
    assert.match(e.message, /Invalid Form Body \(code 50035\): channel_id: Value "general" is not snowflake\./);
  });

  it('fails without retry on a wrong bot token (401), never quoting the token', async () => {
    const e = await rejects(adapter('wrong-token').send(CHANNEL, 'hi', signal()));
    assert.equal(e.status, 401);
    assert.equal(e.retryable, false);
    assert.equal(e.message, 'discord 401: 401: Unauthorized');
  });

  it('retries 429 after the body retry_after, finer than the rounded Retry-After header', async () => {
    fake.script.push(discordRateLimit(1.337));
    const e = await rejects(adapter().send(CHANNEL, 'hi', signal()));
    assert.equal(e.status, 429);
    assert.equal(e.retryable, true);
    assert.equal(e.retryAfterMs, 1337, 'body 1.337 s, not header 2 s');
    assert.match(e.message, /You are being rate limited\./);
  });

  it('says when a 429 is the global rate limit', async () => {
    fake.script.push(discordRateLimit(0.25, { global: true }));
    const e = await rejects(adapter().send(CHANNEL, 'hi', signal()));
    assert.equal(e.retryAfterMs, 250);
    assert.match(e.message, /global rate limit/);
  });

  it('falls back to the Retry-After header on a 429 without a JSON body', async () => {
    fake.script.push({ status: 429, body: 'error code: 1015', headers: { 'retry-after': '3' } });
    const e = await rejects(adapter().send(CHANNEL, 'hi', signal()));
    assert.equal(e.retryable, true);
    assert.equal(e.retryAfterMs, 3000);
  });

  it('retries 5xx', async () => {
    fake.script.push(discordError(503, '503: Service Unavailable'));
    const e = await rejects(adapter().send(CHANNEL, 'hi', signal()));
    assert.equal(e.status, 503);
    assert.equal(e.retryable, true);
  });

  it('retries a network failure', async () => {
    const channel = createDiscordChannel({ botToken: TOKEN, baseUrl: await closedPortUrl() });
    const e = await rejects(channel.send(CHANNEL, 'hi', signal()));
    assert.equal(e.retryable, true);
    assert.equal(e.status, undefined);
  });

  it('has the real limit: the API refuses one char more, takes exactly maxMessageChars', async () => {
    const channel = adapter();
    assert.equal(channel.maxMessageChars, 2000);
    const e = await rejects(channel.send(CHANNEL, 'x'.repeat(channel.maxMessageChars + 1), signal()));
    assert.equal(e.retryable, false);
    assert.match(e.message, /content: Must be 2000 or fewer in length\./);
    await channel.send(CHANNEL, 'x'.repeat(channel.maxMessageChars), signal());
    assert.equal(fake.messages.at(-1)!.text.length, channel.maxMessageChars);
  });

  it('delivers a long reply split with splitMessage, every part accepted, joined back whole', async () => {
    const channel = adapter();
    const text = words(channel.maxMessageChars * 3 + 100);
    const before = fake.messages.length;
    const parts = splitMessage(text, channel.maxMessageChars);
    assert.ok(parts.length >= 4);
    for (const part of parts) await channel.send(CHANNEL, part, signal());
    const got = fake.messages.slice(before).map((m) => m.text);
    assert.equal(got.length, parts.length);
    assert.equal(got.join(''), text);
  });

  it('gives up on a slow answer when the signal aborts', async () => {
    fake.script.push({ status: 200, body: { id: '1' }, delayMs: 5000 });
    const started = Date.now();
    const e = await rejects(adapter().send(CHANNEL, 'hi', AbortSignal.timeout(50)));
    assert.equal(e.retryable, true);
    assert.match(e.message, /timed out/);
    assert.ok(Date.now() - started < 2000);
  });
});
