import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { createFakeOpenAi, openAiError } from '../../../test/fakes/fake-openai.js';
import { createFakeAnthropic, anthropicError } from '../../../test/fakes/fake-anthropic.js';
import type { FakeServer } from '../../../test/fakes/create-fake-server.js';
import { callWithRetry, type RetryDeps } from './call-with-retry.js';
import { createAnthropicProvider } from './create-anthropic-provider.js';
import { createOpenAiProvider } from './create-openai-provider.js';
import { ProviderError, type CompletionRequest, type ModelProvider } from './model-provider.js';

/** Ten minutes: the default `timeoutSeconds`, which a refused host used to hold a run slot for. */
const DEADLINE_MS = 600_000;

/** A clock that only moves when the retry loop sleeps, and the sleeps it was asked for. */
function fakeTime(): RetryDeps & { slept: number[] } {
  let now = 1_000_000;
  const slept: number[] = [];
  return {
    slept,
    now: () => now,
    random: () => 0.5,
    sleep: async (ms) => {
      slept.push(ms);
      now += ms;
    },
  };
}

const request = (): CompletionRequest => ({
  model: 'gpt-test',
  system: 'be brief',
  messages: [{ role: 'user', content: 'hello' }],
  thinking: null,
  signal: AbortSignal.timeout(20_000),
});

/** A port that was just free: nothing listens there, so connecting is refused. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Counts calls, so a test can tell how many attempts the loop made. */
function counting(provider: ModelProvider): ModelProvider & { calls: number } {
  const counted = {
    calls: 0,
    complete: (req: CompletionRequest) => {
      counted.calls++;
      return provider.complete(req);
    },
  };
  return counted;
}

async function failure(p: Promise<unknown>): Promise<ProviderError> {
  try {
    await p;
  } catch (error) {
    assert.ok(error instanceof ProviderError, String(error));
    return error;
  }
  assert.fail('expected a ProviderError');
}

describe('callWithRetry fails fast on what will not heal', () => {
  let openai: FakeServer;
  let anthropic: FakeServer;
  before(async () => {
    openai = await createFakeOpenAi({ apiKey: 'sk-test', reply: () => 'fine' });
    anthropic = await createFakeAnthropic({ apiKey: 'ak-test', reply: () => 'fine' });
  });
  after(async () => {
    await openai.close();
    await anthropic.close();
  });

  it('gives up on a refused connection after three quick tries, well inside two seconds', async () => {
    const time = fakeTime();
    const provider = counting(
      createOpenAiProvider({ baseUrl: `http://127.0.0.1:${await closedPort()}/v1`, apiKey: 'sk-test', now: time.now }),
    );
    const e = await failure(callWithRetry(provider, request(), time.now() + DEADLINE_MS, time));
    assert.equal(provider.calls, 3);
    assert.equal(e.network, 'refused');
    assert.equal(e.retryable, false);
    assert.match(e.message, /connection refused.*ECONNREFUSED.*gave up after 3 attempts/);
    assert.equal(time.slept.length, 2);
    assert.ok(time.slept.reduce((a, b) => a + b, 0) < 2000, `slept ${time.slept.join('+')} ms`);
  });

  it('gives up on a host that does not resolve after two quick tries', async () => {
    const time = fakeTime();
    const provider = counting(
      createAnthropicProvider({ baseUrl: 'http://models.hookgate.invalid', apiKey: 'ak-test', now: time.now }),
    );
    const e = await failure(callWithRetry(provider, request(), time.now() + DEADLINE_MS, time));
    assert.equal(provider.calls, 2);
    assert.equal(e.network, 'dns');
    assert.match(e.message, /host name does not resolve.*models\.hookgate\.invalid.*gave up after 2 attempts/);
    assert.ok(time.slept.reduce((a, b) => a + b, 0) < 1000);
  });

  it('fails at once on a TLS failure (HTTPS spoken to a plain HTTP port)', async () => {
    const time = fakeTime();
    const provider = counting(
      createOpenAiProvider({
        baseUrl: `${openai.url.replace('http:', 'https:')}/v1`,
        apiKey: 'sk-test',
        now: time.now,
      }),
    );
    const e = await failure(callWithRetry(provider, request(), time.now() + DEADLINE_MS, time));
    assert.equal(provider.calls, 1);
    assert.equal(e.network, 'tls');
    assert.match(e.message, /TLS failure/);
    assert.deepEqual(time.slept, []);
  });

  for (const [status, provider] of [
    [401, 'openai'],
    [401, 'anthropic'],
    [403, 'openai'],
    [404, 'anthropic'],
  ] as const) {
    it(`fails at once on ${status} from ${provider}`, async () => {
      const time = fakeTime();
      const fake = provider === 'openai' ? openai : anthropic;
      fake.script.push(
        provider === 'openai'
          ? openAiError(status, 'You are not allowed to sample from this model', 'invalid_request_error')
          : anthropicError(status, status === 404 ? 'not_found_error' : 'authentication_error', 'model: not found'),
      );
      const before = fake.requests.length;
      const p =
        provider === 'openai'
          ? createOpenAiProvider({ baseUrl: `${fake.url}/v1`, apiKey: 'sk-test', now: time.now })
          : createAnthropicProvider({ baseUrl: fake.url, apiKey: 'ak-test', now: time.now });
      const e = await failure(callWithRetry(p, request(), time.now() + DEADLINE_MS, time));
      assert.equal(e.status, status);
      assert.equal(fake.requests.length - before, 1, 'no retry');
      assert.deepEqual(time.slept, []);
    });
  }

  it('retries a 503 and succeeds on the 200 after it', async () => {
    const time = fakeTime();
    openai.script.push(openAiError(503, 'The server is overloaded or not ready yet.', 'server_error'));
    const before = openai.requests.length;
    const p = createOpenAiProvider({ baseUrl: `${openai.url}/v1`, apiKey: 'sk-test', now: time.now });
    const r = await callWithRetry(p, request(), time.now() + DEADLINE_MS, time);
    assert.equal(r.text, 'fine');
    assert.equal(openai.requests.length - before, 2);
    assert.equal(time.slept.length, 1);
  });

  it('keeps retrying 5xx for as long as the deadline allows, past the quick-try count', async () => {
    const time = fakeTime();
    for (let i = 0; i < 5; i++) anthropic.script.push(anthropicError(529, 'overloaded_error', 'Overloaded'));
    const before = anthropic.requests.length;
    const p = createAnthropicProvider({ baseUrl: anthropic.url, apiKey: 'ak-test', now: time.now });
    const r = await callWithRetry(p, request(), time.now() + DEADLINE_MS, time);
    assert.equal(r.text, 'fine');
    assert.equal(anthropic.requests.length - before, 6);
  });
});
