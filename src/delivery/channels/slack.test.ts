import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createFakeSlack, slackError, slackRateLimit, type FakeSlack } from '../../../test/fakes/fake-slack.js';
import { splitMessage } from '../split-message.js';
import { rejects, closedPortUrl, signal, words } from '../../../test/fakes/channel-test-kit.js';
import { createSlackChannel } from './slack.js';

const TOKEN = 'xoxb-1111111111-2222222222222-fakeTokenForTests';
const CHANNEL = 'C0123456789';

describe('slack channel against a fake Web API', () => {
  let fake: FakeSlack;
  before(async () => {
    fake = await createFakeSlack({ botToken: TOKEN, channels: [CHANNEL] });
  });
  after(() => fake.close());
  const adapter = (botToken = TOKEN) => createSlackChannel({ botToken, baseUrl: fake.url });

  it('posts {channel, text} with unfurls off to chat.postMessage with the bearer token, as utf-8 JSON', async () => {
    await adapter().send(CHANNEL, 'Build #42 passed', signal());
    const req = fake.requests.at(-1)!;
    assert.equal(req.method, 'POST');
    assert.equal(req.path, '/chat.postMessage');
    assert.equal(req.headers.authorization, `Bearer ${TOKEN}`);
    assert.equal(req.headers['content-type'], 'application/json; charset=utf-8');
    assert.deepEqual(req.body, {
      channel: CHANNEL,
      text: 'Build #42 passed',
      link_names: false,
      unfurl_links: false,
      unfurl_media: false,
    });
    assert.deepEqual(fake.messages.at(-1), { to: CHANNEL, text: 'Build #42 passed' });
  });

  it('writes out the commands that notify a whole channel or team, and links no plain @channel', async () => {
    await adapter().send(
      CHANNEL,
      'Alert <!channel> <!here|here> <!everyone> <!subteam^S0123|@oncall> @channel',
      signal(),
    );
    const body = fake.requests.at(-1)!.body as { text: string; link_names: boolean };
    assert.equal(
      body.text,
      'Alert &lt;!channel&gt; &lt;!here|here&gt; &lt;!everyone&gt; &lt;!subteam^S0123|@oncall&gt; @channel',
    );
    assert.equal(body.link_names, false);
  });

  it('leaves links, user mentions and dates as they are', async () => {
    const text = 'See <https://example.com|the log>, <@U0123>, <!date^1392734382^{date}|Feb 18>';
    await adapter().send(CHANNEL, text, signal());
    assert.equal((fake.requests.at(-1)!.body as { text: string }).text, text);
  });

  it('fails without retry on ok:false (HTTP 200), naming the Slack error', async () => {
    const e = await rejects(adapter().send('C9999999999', 'hi', signal()));
    assert.equal(e.code, 'delivery_failed');
    assert.equal(e.status, 200);
    assert.equal(e.retryable, false);
    assert.equal(e.message, 'slack 200: channel_not_found');
  });

  it('adds response_metadata.messages to the error', async () => {
    fake.script.push(slackError('invalid_arguments', { messages: ['[ERROR] missing required field: channel'] }));
    const e = await rejects(adapter().send(CHANNEL, 'hi', signal()));
    assert.equal(e.retryable, false);
    assert.equal(e.message, 'slack 200: invalid_arguments ([ERROR] missing required field: channel)');
  });

  it('fails without retry on a wrong token (invalid_auth)', async () => {
    const e = await rejects(adapter('xoxb-wrong').send(CHANNEL, 'hi', signal()));
    assert.equal(e.retryable, false);
    assert.match(e.message, /invalid_auth/);
    assert.doesNotMatch(e.message, /xoxb/);
  });

  it('fails without retry on an HTTP 401', async () => {
    fake.script.push(slackError('invalid_auth', { status: 401 }));
    const e = await rejects(adapter().send(CHANNEL, 'hi', signal()));
    assert.equal(e.status, 401);
    assert.equal(e.retryable, false);
  });

  it('retries 429 after the Retry-After header', async () => {
    fake.script.push(slackRateLimit(30));
    const e = await rejects(adapter().send(CHANNEL, 'hi', signal()));
    assert.equal(e.status, 429);
    assert.equal(e.retryable, true);
    assert.equal(e.retryAfterMs, 30_000);
    assert.equal(e.message, 'slack 429: ratelimited');
  });

  it('retries service_unavailable, which Slack documents as temporary', async () => {
    fake.script.push(slackError('service_unavailable'));
    const e = await rejects(adapter().send(CHANNEL, 'hi', signal()));
    assert.equal(e.retryable, true);
  });

  it('does not retry internal_error, which may have posted already', async () => {
    fake.script.push(slackError('internal_error'));
    const e = await rejects(adapter().send(CHANNEL, 'hi', signal()));
    assert.equal(e.retryable, false);
  });

  it('retries 5xx', async () => {
    fake.script.push({ status: 503, body: 'upstream unavailable' });
    const e = await rejects(adapter().send(CHANNEL, 'hi', signal()));
    assert.equal(e.status, 503);
    assert.equal(e.retryable, true);
  });

  it('retries a network failure', async () => {
    const channel = createSlackChannel({ botToken: TOKEN, baseUrl: await closedPortUrl() });
    const e = await rejects(channel.send(CHANNEL, 'hi', signal()));
    assert.equal(e.retryable, true);
    assert.equal(e.status, undefined);
  });

  it('has the real limit: the API refuses one char more, takes exactly maxMessageChars', async () => {
    const channel = adapter();
    assert.equal(channel.maxMessageChars, 40_000);
    const e = await rejects(channel.send(CHANNEL, 'x'.repeat(channel.maxMessageChars + 1), signal()));
    assert.equal(e.retryable, false);
    assert.match(e.message, /msg_too_long/);
    await channel.send(CHANNEL, 'x'.repeat(channel.maxMessageChars), signal());
    assert.equal(fake.messages.at(-1)!.text.length, channel.maxMessageChars);
  });

  it('delivers a long reply split with splitMessage, every part accepted, joined back whole', async () => {
    const channel = adapter();
    const text = words(channel.maxMessageChars * 2 + 10);
    const before = fake.messages.length;
    const parts = splitMessage(text, channel.maxMessageChars);
    assert.ok(parts.length >= 3);
    for (const part of parts) await channel.send(CHANNEL, part, signal());
    const got = fake.messages.slice(before).map((m) => m.text);
    assert.equal(got.length, parts.length);
    assert.equal(got.join(''), text);
  });

  it('gives up on a slow answer when the signal aborts', async () => {
    fake.script.push({ status: 200, body: { ok: true }, delayMs: 5000 });
    const started = Date.now();
    const e = await rejects(adapter().send(CHANNEL, 'hi', AbortSignal.timeout(50)));
    assert.equal(e.retryable, true);
    assert.match(e.message, /timed out/);
    assert.ok(Date.now() - started < 2000);
  });
});
