import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { NetworkFailure } from './classify-network-error.js';
import { classifyNetworkError } from './classify-network-error.js';
import { ProviderError } from './model-provider.js';
import { providerRetryDelayMs } from './provider-retry-delay.js';

const net = (network: NetworkFailure, retryable = true): ProviderError =>
  new ProviderError('x', { retryable, network });
const http = (status: number, retryable: boolean, retryAfterMs?: number): ProviderError =>
  new ProviderError('x', { status, retryable, ...(retryAfterMs === undefined ? {} : { retryAfterMs }) });
const half = (): number => 0.5;

describe('providerRetryDelayMs', () => {
  const cases: Array<[string, ProviderError, number, number, 'retry' | 'stop']> = [
    ['refused, first try', net('refused'), 1, 1, 'retry'],
    ['refused, second try', net('refused'), 2, 2, 'retry'],
    ['refused, third try', net('refused'), 3, 3, 'stop'],
    ['dns, first try', net('dns'), 1, 1, 'retry'],
    ['dns, second try', net('dns'), 2, 2, 'stop'],
    ['reset, tenth try', net('reset'), 10, 10, 'retry'],
    ['timeout, tenth try', net('timeout'), 10, 10, 'retry'],
    ['tls', net('tls', false), 1, 1, 'stop'],
    ['429', http(429, true), 7, 7, 'retry'],
    ['503', http(503, true), 7, 7, 'retry'],
    ['401', http(401, false), 1, 1, 'stop'],
  ];
  for (const [name, error, attempt, tries, want] of cases) {
    it(`${want === 'retry' ? 'retries' : 'stops on'} ${name}`, () => {
      const delay = providerRetryDelayMs(error, attempt, tries, half);
      if (want === 'stop') assert.equal(delay, null);
      else assert.ok(delay !== null && delay > 0, String(delay));
    });
  }

  it('keeps quick tries quick: at most a second each', () => {
    for (const tries of [1, 2]) assert.ok(providerRetryDelayMs(net('refused'), 9, tries, () => 1)! <= 1000);
  });

  it('honours Retry-After on a 429', () => {
    assert.equal(providerRetryDelayMs(http(429, true, 7000), 1, 1, half), 7000);
  });
});

describe('classifyNetworkError', () => {
  const err = (code: string, message = code): Error => Object.assign(new Error(message), { code });
  const cases: Array<[unknown, NetworkFailure]> = [
    [err('ENOTFOUND'), 'dns'],
    [err('EAI_AGAIN'), 'dns'],
    [err('ECONNREFUSED'), 'refused'],
    [err('EHOSTUNREACH'), 'refused'],
    [err('CERT_HAS_EXPIRED'), 'tls'],
    [err('DEPTH_ZERO_SELF_SIGNED_CERT'), 'tls'],
    [err('ERR_TLS_CERT_ALTNAME_INVALID'), 'tls'],
    [err('ERR_SSL_WRONG_VERSION_NUMBER'), 'tls'],
    [err('EPROTO'), 'tls'],
    [err('ERR_INVALID_URL'), 'config'],
    [err('ETIMEDOUT'), 'timeout'],
    [err('ECONNRESET', 'socket hang up'), 'reset'],
    [new Error('response aborted'), 'reset'],
    [new Error('wrapped', { cause: err('ENOTFOUND') }), 'dns'],
  ];
  for (const [error, want] of cases) {
    it(`classifies ${(error as { code?: string }).code ?? (error as Error).message} as ${want}`, () => {
      assert.equal(classifyNetworkError(error).failure, want);
    });
  }
});
