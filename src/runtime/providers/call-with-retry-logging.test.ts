import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createLog } from '../../common/log.js';
import { callWithRetry } from './call-with-retry.js';
import { ProviderError, type CompletionRequest, type ModelProvider } from './model-provider.js';

const request = (): CompletionRequest => ({
  model: 'gpt-test',
  system: '',
  messages: [],
  thinking: null,
  signal: new AbortController().signal,
});

/** A provider answering from a script: errors are thrown, strings are replies. */
function scripted(steps: Array<ProviderError | string>): ModelProvider {
  return {
    complete: async () => {
      const step = steps.shift();
      if (step === undefined || step instanceof ProviderError) throw step ?? new Error('script ran out');
      return { text: step, model: 'gpt-test' };
    },
  };
}

describe('callWithRetry: retry logging', () => {
  it('logs each retry at warn with the attempt, the wait and the status, never sleeping for real', async () => {
    const lines: Record<string, unknown>[] = [];
    const waits: number[] = [];
    const provider = scripted([
      new ProviderError('Rate limit reached', { status: 429, retryable: true, retryAfterMs: 1_500 }),
      new ProviderError('The server is overloaded', { status: 503, retryable: true }),
      'done',
    ]);
    const result = await callWithRetry(provider, request(), 1_000_000, {
      now: () => 0,
      sleep: async (ms) => {
        waits.push(ms);
      },
      random: () => 0.5,
      log: createLog({ write: (l) => lines.push(JSON.parse(l) as Record<string, unknown>), repeatIntervalMs: 0 }),
    });
    assert.equal(result.text, 'done');
    assert.equal(lines.length, 2);
    assert.deepEqual(
      lines.map((l) => [l['level'], l['msg'], l['attempt'], l['status'], l['model']]),
      [
        [40, 'model call failed; will retry', 1, 429, 'gpt-test'],
        [40, 'model call failed; will retry', 2, 503, 'gpt-test'],
      ],
    );
    assert.deepEqual(
      lines.map((l) => l['waitMs']),
      waits,
      'the logged wait is the wait taken',
    );
    assert.equal(waits[0], 1_500, 'Retry-After honoured');
  });

  it('logs nothing for a failure it does not retry', async () => {
    const lines: string[] = [];
    await assert.rejects(
      callWithRetry(
        scripted([new ProviderError('Incorrect API key provided', { status: 401, retryable: false })]),
        request(),
        1_000_000,
        {
          now: () => 0,
          sleep: async () => {},
          random: () => 0.5,
          log: createLog({ write: (l) => lines.push(l) }),
        },
      ),
      /Incorrect API key/,
    );
    assert.equal(lines.length, 0);
  });
});
