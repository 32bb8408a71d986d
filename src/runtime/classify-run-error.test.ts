import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { TurnTimeoutError } from './call-model-turn.js';
import { classifyRunError, type RunErrorCategory } from './classify-run-error.js';
import { ProviderError } from './providers/model-provider.js';

describe('classifyRunError', () => {
  const cases: Array<[string, unknown, RunErrorCategory]> = [
    ['a turn timeout', new TurnTimeoutError(1000), 'timeout'],
    [
      '401 (wrong API key)',
      new ProviderError('Incorrect API key provided', { status: 401, retryable: false }),
      'provider_auth',
    ],
    ['403', new ProviderError('forbidden', { status: 403, retryable: false }), 'provider_auth'],
    [
      '429 after the last retry',
      new ProviderError('Rate limit reached', { status: 429, retryable: true }),
      'provider_rate_limited',
    ],
    ['503', new ProviderError('overloaded', { status: 503, retryable: true }), 'provider_unavailable'],
    [
      '400 (bad request)',
      new ProviderError('context too long', { status: 400, retryable: false }),
      'provider_rejected',
    ],
    ['a network failure', new ProviderError('connect ECONNREFUSED', { retryable: true }), 'network'],
    ['an unknown model', new ProviderError('no provider for model "x/y"', { retryable: false }), 'config'],
    ['anything else', new TypeError('undefined is not a function'), 'internal'],
  ];
  for (const [what, error, expected] of cases) {
    it(`classifies ${what} as ${expected}`, () => assert.equal(classifyRunError(error), expected));
  }
});
