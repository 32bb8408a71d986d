import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { computeRetryDelayMs, parseRetryAfterMs } from './retry.js';

describe('computeRetryDelayMs', () => {
  it('doubles the step with each attempt, jittered within its upper half', () => {
    assert.equal(
      computeRetryDelayMs(1, undefined, () => 0),
      250,
    );
    assert.equal(
      computeRetryDelayMs(1, undefined, () => 1),
      500,
    );
    assert.equal(
      computeRetryDelayMs(3, undefined, () => 0),
      1000,
    );
    assert.equal(
      computeRetryDelayMs(3, undefined, () => 1),
      2000,
    );
  });
  it('caps the step', () => {
    assert.equal(
      computeRetryDelayMs(20, undefined, () => 1, { maxMs: 5000 }),
      5000,
    );
  });
  it('honours a server hint exactly', () => {
    assert.equal(
      computeRetryDelayMs(5, 1234, () => 1),
      1234,
    );
    assert.equal(
      computeRetryDelayMs(1, 0, () => 1),
      0,
    );
  });
});

describe('parseRetryAfterMs', () => {
  const now = Date.parse('2026-01-01T00:00:00Z');
  it('reads delta-seconds', () => assert.equal(parseRetryAfterMs('3', now), 3000));
  it('reads fractional seconds', () => assert.equal(parseRetryAfterMs('0.5', now), 500));
  it('reads an HTTP-date', () => assert.equal(parseRetryAfterMs('Thu, 01 Jan 2026 00:00:10 GMT', now), 10_000));
  it('never goes negative', () => assert.equal(parseRetryAfterMs('Wed, 31 Dec 2025 00:00:00 GMT', now), 0));
  it('ignores garbage and absence', () => {
    assert.equal(parseRetryAfterMs('soon', now), undefined);
    assert.equal(parseRetryAfterMs(null, now), undefined);
  });
});
