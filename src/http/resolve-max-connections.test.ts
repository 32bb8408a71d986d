import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readOpenFileLimit, resolveMaxConnections } from './resolve-max-connections.js';

describe('resolveMaxConnections', () => {
  const cases: Array<[string, number | undefined, number | undefined, number]> = [
    ['keeps a configured value', 25, 1024, 25],
    ['keeps a configured value above the default', 5000, 1_048_576, 5000],
    ['stays under a 1,024 file limit, with room for the connections held past it', undefined, 1024, 928],
    ['uses 1000 under a high file limit', undefined, 1_048_576, 1000],
    ['uses 1000 when the limit is unknown', undefined, undefined, 1000],
    ['never goes below one', undefined, 10, 1],
  ];
  for (const [name, configured, limit, want] of cases)
    it(name, () => assert.equal(resolveMaxConnections(configured, limit), want));
});

describe('readOpenFileLimit', () => {
  it('reads a positive limit on Linux, nothing elsewhere', () => {
    const limit = readOpenFileLimit();
    if (process.platform === 'linux')
      assert.ok(limit === undefined || (Number.isInteger(limit) && limit > 0), String(limit));
    else assert.equal(limit, undefined);
  });
});
