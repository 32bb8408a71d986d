import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseDurationMs } from './parse-duration.js';

describe('parseDurationMs', () => {
  const cases: Array<[string | number, number | null]> = [
    ['30d', 2_592_000_000],
    ['1h30m', 5_400_000],
    ['45s', 45_000],
    ['500ms', 500],
    [' 12h ', 43_200_000],
    ['1.5s', 1_500],
    ['0', 0],
    [0, 0],
    ['', null],
    ['30', null],
    ['30 d', null],
    ['30D', null],
    ['-1d', null],
    ['1e3d', null],
    ['NaN', null],
    [30, null],
    // Past what a double holds: the digits alone are Infinity.
    [`${'9'.repeat(400)}d`, null],
    [`${'9'.repeat(400)}ms`, null],
    // Finite, only very large: the caller bounds it.
    ['99999999999999999999999d', 1e23 * 86_400_000],
  ];
  for (const [text, ms] of cases) {
    it(`reads ${JSON.stringify(text).slice(0, 40)} as ${ms}`, () => assert.equal(parseDurationMs(text), ms));
  }
});
