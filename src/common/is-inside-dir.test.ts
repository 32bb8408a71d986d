import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { isInsideDir } from './is-inside-dir.js';

describe('isInsideDir', () => {
  const cases: Array<[string, boolean]> = [
    ['/r', true],
    ['/r/a.js', true],
    ['/r/sub/a.js', true],
    ['/r/..dotted.js', true],
    ['/r/../x.js', false],
    ['/x.js', false],
    ['/rr/a.js', false],
    ['/', false],
  ];
  for (const [target, want] of cases)
    it(`${target} is ${want ? '' : 'not '}inside /r`, () => assert.equal(isInsideDir('/r', target), want));
});
