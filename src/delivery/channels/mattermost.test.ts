import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  createFakeMattermost,
  mattermostError,
  mattermostRateLimit,
  type FakeMattermost,
} from '../../../test/fakes/fake-mattermost.js';
import { splitMessage } from '../split-message.js';
import { rejects, closedPortUrl, signal, words } from '../../../test/fakes/channel-test-kit.js';
import { createMattermostChannel } from './mattermost.js';

const TOKEN = 'xw9cq8ne3jy5fmj8ag4i7ucbeh';
const CHANNEL = 'fhdi3t9s1pgo8rfzm4i6k5ewar';

describe('mattermost channel against a fake v4 API', () => {
  let fake: FakeMattermost;
  before(async () => {
    fake = await createFakeMattermost({ token: TOKEN, channelIds: [CHANNEL] });
  });
  after(() => fake.close());
  const adapter = (token = TOKEN, baseUrl = fake.url) => createMattermostChannel({ token, baseUrl });

  it('posts {channel_id, message} with link previews off to /api/v4/posts with the bearer token, and the post arrives', async () => {
    await adapter().send(CHANNEL, 'Build #42 passed', signal());
    const req = fake.requests.at(-1)!;
    assert.equal(req.method, 'POST');
    assert.equal(req.path, '/api/v4/posts');
    assert.equal(req.headers.authorization, `Bearer ${TOKEN}`);
    assert.match(String(req.headers['content-type']), /^application\/json/);
    assert.deepEqual(req.body, {
      channel_id: CHANNEL,
      message: 'Build #42 passed',
      props: { remove_link_preview: 'true', unsafe_links: 'true' },
    });
    assert.deepEqual(fake.messages.at(-1), { to: CHANNEL, text: 'Build #42 passed' });
  });

  it('makes @channel, @all, @here and @everyone plain words, and leaves a user mention', async () => {
    await adapter().send(
      CHANNEL,
      'Hey @channel, @ALL and @here: @everyone, ask @alice (not a@channel.example)',
      signal(),
    );
    const message = (fake.requests.at(-1)!.body as { message: string }).message;
    assert.equal(
      message,
      'Hey @\u2060channel, @\u2060ALL and @\u2060here: @\u2060everyone, ask @alice (not a@channel.example)',
    );
  });

  it('accepts a baseUrl that already ends in /api/v4/', async () => {
    await adapter(TOKEN, `${fake.url}/api/v4/`).send(CHANNEL, 'hi', signal());
    assert.equal(fake.requests.at(-1)!.path, '/api/v4/posts');
  });

  it('fails without retry on a channel the bot cannot post in, quoting message and id', async () => {
    const e = await rejects(adapter().send('ayyyyyyyyyyyyyyyyyyyyyyyyy', 'hi', signal()));
    assert.equal(e.code, 'delivery_failed');
    assert.equal(e.status, 403);
    assert.equal(e.retryable, false);
    assert.equal(
      e.message,
      'mattermost 403: You do not have the appropriate permissions. (api.context.permissions.app_error)',
    );
  });

  it('fails without retry on a wrong token (401), leaving detailed_error out', async () => {
    fake.script.push(
      mattermostError(
        401,
        'api.context.session_expired.app_error',
        'Invalid or expired session, please login again.',
        'token=secret-session',
      ),
    );
    const e = await rejects(adapter().send(CHANNEL, 'hi', signal()));
    assert.equal(e.status, 401);
    assert.equal(e.retryable, false);
    assert.match(e.message, /Invalid or expired session/);
    assert.doesNotMatch(e.message, /secret-session/);
  });

  it('the fake refuses a wrong token the way the server does', async () => {
    const e = await rejects(adapter('wrongtoken').send(CHANNEL, 'hi', signal()));
    assert.equal(e.status, 401);
    assert.equal(e.retryable, false);
    assert.match(e.message, /api\.context\.session_expired\.app_error/);
  });

  it('retries 429 after the Retry-After header, quoting the plain-text body', async () => {
    fake.script.push(mattermostRateLimit(2));
    const e = await rejects(adapter().send(CHANNEL, 'hi', signal()));
    assert.equal(e.status, 429);
    assert.equal(e.retryable, true);
    assert.equal(e.retryAfterMs, 2000);
    assert.match(e.message, /limit exceeded/);
  });

  it('retries 5xx', async () => {
    fake.script.push(mattermostError(500, 'app.post.save.app_error', 'Unable to save the post.'));
    const e = await rejects(adapter().send(CHANNEL, 'hi', signal()));
    assert.equal(e.status, 500);
    assert.equal(e.retryable, true);
    assert.match(e.message, /Unable to save the post/);
  });

  it('retries a network failure', async () => {
    const e = await rejects(adapter(TOKEN, await closedPortUrl()).send(CHANNEL, 'hi', signal()));
    assert.equal(e.retryable, true);
    assert.equal(e.status, undefined);
  });

  it('has the real limit: the API refuses one char more, takes exactly maxMessageChars', async () => {
    const channel = adapter();
    assert.equal(channel.maxMessageChars, 16_383);
    const e = await rejects(channel.send(CHANNEL, 'x'.repeat(channel.maxMessageChars + 1), signal()));
    assert.equal(e.status, 400);
    assert.equal(e.retryable, false);
    assert.match(e.message, /model\.post\.is_valid\.msg\.app_error/);
    await channel.send(CHANNEL, 'x'.repeat(channel.maxMessageChars), signal());
    assert.equal(fake.messages.at(-1)!.text.length, channel.maxMessageChars);
  });

  it('delivers a long reply split with splitMessage, every part accepted, joined back whole', async () => {
    const channel = adapter();
    const text = words(channel.maxMessageChars * 2 + 77);
    const before = fake.messages.length;
    const parts = splitMessage(text, channel.maxMessageChars);
    assert.ok(parts.length >= 3);
    for (const part of parts) await channel.send(CHANNEL, part, signal());
    const got = fake.messages.slice(before).map((m) => m.text);
    assert.equal(got.length, parts.length);
    assert.equal(got.join(''), text);
  });

  it('gives up on a slow answer when the signal aborts', async () => {
    fake.script.push({ status: 201, body: { id: 'x' }, delayMs: 5000 });
    const started = Date.now();
    const e = await rejects(adapter().send(CHANNEL, 'hi', AbortSignal.timeout(50)));
    assert.equal(e.retryable, true);
    assert.match(e.message, /timed out/);
    assert.ok(Date.now() - started < 2000);
  });
});
