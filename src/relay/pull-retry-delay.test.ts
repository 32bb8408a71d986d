import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { pullRetryDelayMs } from './pull-retry-delay.js';

describe('pullRetryDelayMs', () => {
  const cases: Array<[string, number, number | undefined, number, number]> = [
    ['half a second fixed, half random, after the first failure (random 0)', 1, undefined, 0, 500],
    ['a full second after the first failure (random 1)', 1, undefined, 1, 1000],
    ['doubling with each failure', 3, undefined, 1, 4000],
    ['never past the cap', 20, undefined, 1, 60_000],
    ["the relay's Retry-After, past the cap too", 2, 90_000, 0.5, 90_000],
  ];
  for (const [name, failures, retryAfter, random, want] of cases) {
    it(`waits ${name}`, () =>
      assert.equal(
        pullRetryDelayMs(failures, retryAfter, () => random, 60_000),
        want,
      ));
  }
});
