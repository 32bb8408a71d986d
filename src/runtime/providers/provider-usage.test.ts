import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createFakeAnthropic } from '../../../test/fakes/fake-anthropic.js';
import { createFakeOpenAi } from '../../../test/fakes/fake-openai.js';
import type { FakeServer } from '../../../test/fakes/create-fake-server.js';
import { createAnthropicProvider } from './create-anthropic-provider.js';
import { createOpenAiProvider } from './create-openai-provider.js';
import { readUsage, type CompletionRequest } from './model-provider.js';

const request = (): CompletionRequest => ({
  model: 'm-1',
  system: 'be brief',
  messages: [{ role: 'user', content: 'hello' }],
  thinking: null,
  signal: AbortSignal.timeout(5000),
});

describe('token usage carried out of provider calls', () => {
  let openai: FakeServer;
  let anthropic: FakeServer;
  before(async () => {
    openai = await createFakeOpenAi({ apiKey: 'sk-test', reply: () => 'hi' });
    anthropic = await createFakeAnthropic({ apiKey: 'sk-ant', reply: () => 'hi' });
  });
  after(async () => {
    await openai.close();
    await anthropic.close();
  });

  it('reads OpenAI usage.prompt_tokens and usage.completion_tokens', async () => {
    const r = await createOpenAiProvider({ baseUrl: `${openai.url}/v1`, apiKey: 'sk-test', now: Date.now }).complete(
      request(),
    );
    assert.deepEqual(r.usage, { inputTokens: 10, outputTokens: 5 });
  });

  it('reads Anthropic usage.input_tokens and usage.output_tokens', async () => {
    const r = await createAnthropicProvider({ baseUrl: anthropic.url, apiKey: 'sk-ant', now: Date.now }).complete(
      request(),
    );
    assert.deepEqual(r.usage, { inputTokens: 12, outputTokens: 6 });
  });

  const cases: Array<[string, unknown, ReturnType<typeof readUsage>]> = [
    ['both counts', { prompt_tokens: 3, completion_tokens: 4 }, { inputTokens: 3, outputTokens: 4 }],
    ['zero output', { prompt_tokens: 3, completion_tokens: 0 }, { inputTokens: 3, outputTokens: 0 }],
    ['a missing count', { prompt_tokens: 3 }, undefined],
    ['a count as a string', { prompt_tokens: '3', completion_tokens: 4 }, undefined],
    ['a negative count', { prompt_tokens: -1, completion_tokens: 4 }, undefined],
    ['no usage object', null, undefined],
    ['usage not an object', 7, undefined],
  ];
  for (const [name, usage, expected] of cases) {
    it(`readUsage: ${name}`, () => {
      assert.deepEqual(readUsage(usage, 'prompt_tokens', 'completion_tokens'), expected);
    });
  }
});
