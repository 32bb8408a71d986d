import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createFakeAnthropic, anthropicError } from '../../../test/fakes/fake-anthropic.js';
import { createFakeOpenAi, openAiError } from '../../../test/fakes/fake-openai.js';
import type { FakeServer } from '../../../test/fakes/create-fake-server.js';
import { createSilentListener, type SilentListener } from '../../../test/fakes/create-silent-listener.js';
import { abortableSleep, callWithRetry } from './call-with-retry.js';
import { createAnthropicProvider } from './create-anthropic-provider.js';
import { createOpenAiProvider } from './create-openai-provider.js';
import { ProviderError, type CompletionRequest } from './model-provider.js';

const request = (overrides: Partial<CompletionRequest> = {}): CompletionRequest => ({
  model: 'm-1',
  system: 'be brief',
  messages: [{ role: 'user', content: 'hello' }],
  thinking: null,
  signal: AbortSignal.timeout(5000),
  ...overrides,
});
const retryDeps = { now: Date.now, sleep: abortableSleep, random: () => 0 };

async function rejects(p: Promise<unknown>): Promise<ProviderError> {
  try {
    await p;
  } catch (error) {
    assert.ok(error instanceof ProviderError, String(error));
    return error;
  }
  assert.fail('expected a ProviderError');
}

describe('openai provider against a fake Chat Completions server', () => {
  let fake: FakeServer;
  before(async () => {
    fake = await createFakeOpenAi({ apiKey: 'sk-test', reply: (b) => `echo:${String(b.messages?.at(-1)?.content)}` });
  });
  after(() => fake.close());

  it('sends system + messages with the bearer key and reads the reply', async () => {
    const p = createOpenAiProvider({ baseUrl: `${fake.url}/v1`, apiKey: 'sk-test', now: Date.now });
    const r = await p.complete(request());
    assert.deepEqual(r, { text: 'echo:hello', model: 'm-1', usage: { inputTokens: 10, outputTokens: 5 } });
    const sent = fake.requests.at(-1)!.body as Record<string, unknown>;
    assert.deepEqual(sent['messages'], [
      { role: 'system', content: 'be brief' },
      { role: 'user', content: 'hello' },
    ]);
    assert.equal(sent['reasoning_effort'], undefined);
  });

  it('maps thinking to reasoning_effort', async () => {
    const p = createOpenAiProvider({ baseUrl: `${fake.url}/v1`, apiKey: 'sk-test', now: Date.now });
    await p.complete(request({ thinking: 'xhigh' }));
    assert.equal((fake.requests.at(-1)!.body as Record<string, unknown>)['reasoning_effort'], 'high');
    await p.complete(request({ thinking: 'off' }));
    assert.equal((fake.requests.at(-1)!.body as Record<string, unknown>)['reasoning_effort'], undefined);
  });

  it('fails at once on 401 with the provider message', async () => {
    const p = createOpenAiProvider({ baseUrl: `${fake.url}/v1`, apiKey: 'wrong', now: Date.now });
    const before = fake.requests.length;
    const e = await rejects(callWithRetry(p, request(), Date.now() + 10_000, retryDeps));
    assert.equal(e.status, 401);
    assert.equal(e.retryable, false);
    assert.match(e.message, /Incorrect API key provided/);
    assert.equal(fake.requests.length - before, 1, 'no retry');
  });

  it('retries 429 honouring Retry-After, then 5xx, then succeeds', async () => {
    const p = createOpenAiProvider({ baseUrl: `${fake.url}/v1`, apiKey: 'sk-test', now: Date.now });
    fake.script.push(
      openAiError(429, 'Rate limit reached', 'requests', 'rate_limit_exceeded', { 'retry-after': '0.2' }),
    );
    fake.script.push(openAiError(503, 'The server is overloaded', 'server_error'));
    const before = fake.requests.length;
    const started = Date.now();
    const r = await callWithRetry(p, request(), Date.now() + 10_000, retryDeps);
    assert.equal(r.text, 'echo:hello');
    assert.equal(fake.requests.length - before, 3);
    assert.ok(Date.now() - started >= 190, 'waited for Retry-After');
  });

  it('gives up retrying when the deadline leaves no room', async () => {
    const p = createOpenAiProvider({ baseUrl: `${fake.url}/v1`, apiKey: 'sk-test', now: Date.now });
    fake.script.push(
      openAiError(429, 'Rate limit reached', 'requests', 'rate_limit_exceeded', { 'retry-after': '30' }),
    );
    const e = await rejects(callWithRetry(p, request(), Date.now() + 1000, retryDeps));
    assert.equal(e.status, 429);
  });

  it('is cut off by the signal on a slow answer', async () => {
    const p = createOpenAiProvider({ baseUrl: `${fake.url}/v1`, apiKey: 'sk-test', now: Date.now });
    fake.script.push({ status: 200, body: {}, delayMs: 2000 });
    await assert.rejects(
      p.complete(request({ signal: AbortSignal.timeout(100) })),
      (e: Error) => e.name === 'TimeoutError',
    );
  });

  it('treats a network failure as retryable', async () => {
    const p = createOpenAiProvider({ baseUrl: 'http://127.0.0.1:1/v1', now: Date.now });
    const e = await rejects(p.complete(request()));
    assert.equal(e.retryable, true);
  });
});

describe('anthropic provider against a fake Messages server', () => {
  let fake: FakeServer;
  before(async () => {
    fake = await createFakeAnthropic({
      apiKey: 'ak-test',
      reply: (b) => `claude:${String(b.messages?.at(-1)?.content)}`,
    });
  });
  after(() => fake.close());

  it('sends x-api-key, anthropic-version, system and messages, and joins the text blocks', async () => {
    const p = createAnthropicProvider({ baseUrl: fake.url, apiKey: 'ak-test', now: Date.now });
    const r = await p.complete(request());
    assert.deepEqual(r, { text: 'claude:hello', model: 'm-1', usage: { inputTokens: 12, outputTokens: 6 } });
    const req = fake.requests.at(-1)!;
    assert.equal(req.headers['anthropic-version'], '2023-06-01');
    const body = req.body as Record<string, unknown>;
    assert.equal(body['system'], 'be brief');
    assert.equal(body['max_tokens'], 4096);
    assert.equal(body['thinking'], undefined);
  });

  it('maps thinking to an extended-thinking budget the API accepts, skipping thinking blocks', async () => {
    const p = createAnthropicProvider({ baseUrl: fake.url, apiKey: 'ak-test', now: Date.now });
    for (const level of ['minimal', 'low', 'medium', 'high', 'xhigh'] as const) {
      const r = await p.complete(request({ thinking: level }));
      assert.equal(r.text, 'claude:hello', level);
    }
    assert.deepEqual((fake.requests.at(-1)!.body as Record<string, unknown>)['thinking'], {
      type: 'enabled',
      budget_tokens: 32_000,
    });
  });

  it('fails at once on 400 with the provider message', async () => {
    const p = createAnthropicProvider({ baseUrl: fake.url, apiKey: 'ak-test', now: Date.now });
    const e = await rejects(
      callWithRetry(p, request({ messages: [{ role: 'assistant', content: 'x' }] }), Date.now() + 5000, retryDeps),
    );
    assert.equal(e.status, 400);
    assert.match(e.message, /first message must use the "user" role/);
  });

  it('retries 429 and 529 overloaded', async () => {
    const p = createAnthropicProvider({ baseUrl: fake.url, apiKey: 'ak-test', now: Date.now });
    fake.script.push(
      anthropicError(429, 'rate_limit_error', 'Number of requests has exceeded your rate limit', {
        'retry-after': '0',
      }),
    );
    fake.script.push(anthropicError(529, 'overloaded_error', 'Overloaded'));
    const before = fake.requests.length;
    const r = await callWithRetry(p, request(), Date.now() + 10_000, retryDeps);
    assert.equal(r.text, 'claude:hello');
    assert.equal(fake.requests.length - before, 3);
  });

  it('refuses a wrong key with the provider message', async () => {
    const p = createAnthropicProvider({ baseUrl: fake.url, apiKey: 'nope', now: Date.now });
    const e = await rejects(p.complete(request()));
    assert.equal(e.status, 401);
    assert.match(e.message, /invalid x-api-key/);
  });
});

describe('a provider whose host never answers the connect', () => {
  let silent: SilentListener;
  before(async () => {
    silent = await createSilentListener();
  });
  after(() => silent.close());

  const providers = [
    [
      'openai',
      (connectTimeoutMs: number) =>
        createOpenAiProvider({
          baseUrl: `http://${silent.host}:${silent.port}/v1`,
          apiKey: 'sk-test',
          now: Date.now,
          connectTimeoutMs,
        }),
    ],
    [
      'anthropic',
      (connectTimeoutMs: number) =>
        createAnthropicProvider({
          baseUrl: `http://${silent.host}:${silent.port}`,
          apiKey: 'ak-test',
          now: Date.now,
          connectTimeoutMs,
        }),
    ],
  ] as const;
  for (const [name, create] of providers) {
    it(`${name}: fails each try at the connect timeout as a connection timeout, retried while the deadline allows`, async () => {
      const waits: number[] = [];
      const sleep = (ms: number, signal: AbortSignal): Promise<void> => {
        waits.push(ms);
        return abortableSleep(ms, signal);
      };
      const started = Date.now();
      // The signal outlasts the deadline: only the connect timeout can end each try.
      const e = await rejects(
        callWithRetry(create(100), request({ signal: AbortSignal.timeout(4000) }), started + 2000, {
          ...retryDeps,
          sleep,
        }),
      );
      const elapsed = Date.now() - started;
      assert.equal(e.network, 'timeout');
      assert.equal(e.retryable, true);
      assert.match(
        e.message,
        new RegExp(
          `^${name}: connection timed out: connect ETIMEDOUT 127\\.0\\.0\\.1:${silent.port} \\(not connected within 100 ms\\)$`,
        ),
      );
      assert.deepEqual(waits, [250, 500], 'retried with backoff, not as a quick try');
      assert.ok(elapsed < 2000, `gave up within the deadline (${elapsed} ms)`);
    });
  }
});
