import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { nextLink } from './parse-link-header.js';

describe('nextLink', () => {
  const cases: Array<[string | null, string | null]> = [
    [null, null],
    ['', null],
    [
      '<https://api.github.com/repos/o/r/hooks/1/deliveries?per_page=100&cursor=v1_42>; rel="next"',
      'https://api.github.com/repos/o/r/hooks/1/deliveries?per_page=100&cursor=v1_42',
    ],
    ['<https://x.test/a?cursor=1>; rel="prev", <https://x.test/a?cursor=2>; rel="next"', 'https://x.test/a?cursor=2'],
    ['<https://x.test/a?cursor=1>; rel="prev"', null],
    ['<https://x.test/a?b=1,2>; rel=next', 'https://x.test/a?b=1,2'],
    ['<https://x.test/a>; title="next page"; rel="first"', null],
    ['<https://x.test/n>; rel="next last"', 'https://x.test/n'],
  ];
  for (const [header, want] of cases) {
    it(`reads ${JSON.stringify(header)} as ${JSON.stringify(want)}`, () => assert.equal(nextLink(header), want));
  }
});
