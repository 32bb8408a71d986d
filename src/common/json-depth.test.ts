import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_JSON_DEPTH, textExceedsJsonDepth, valueExceedsJsonDepth } from './json-depth.js';

const nested = (depth: number): string => '['.repeat(depth) + ']'.repeat(depth);
const bytes = (s: string): Buffer => Buffer.from(s, 'utf8');

describe('textExceedsJsonDepth', () => {
  const cases: Array<[string, string, number, boolean]> = [
    ['a flat object', '{"a":1,"b":[1,2]}', 2, false],
    ['exactly the limit', nested(3), 3, false],
    ['one past the limit', nested(4), 3, true],
    ['objects and arrays mixed', '{"a":[{"b":[1]}]}', 3, true],
    ['brackets inside strings', '{"a":"[[[[{{{{"}', 1, false],
    ['an escaped quote inside a string', '{"a":"\\"[[[[[["}', 1, false],
    ['an escaped backslash before the closing quote', '{"a":"\\\\","b":[[1]]}', 2, true],
    ['siblings do not add up', '[[1],[2],[3],[4]]', 2, false],
    ['text no longer than the limit', '[[[', 3, false],
    ['text of opening brackets only, one past the limit', '[[[[', 3, true],
  ];
  for (const [name, text, max, want] of cases) {
    it(`${want ? 'refuses' : 'accepts'} ${name}`, () => assert.equal(textExceedsJsonDepth(bytes(text), max), want));
  }

  it('refuses the 5,000-deep payload that used to overflow JSON.stringify', () => {
    assert.equal(textExceedsJsonDepth(bytes(`{"text":"x","deep":${nested(5000)}}`)), true);
  });

  it('accepts a realistic webhook payload at the default limit', () => {
    assert.equal(textExceedsJsonDepth(bytes(JSON.stringify({ a: { b: { c: { d: [{ e: { f: 1 } }] } } } }))), false);
    assert.equal(textExceedsJsonDepth(bytes(nested(MAX_JSON_DEPTH))), false);
    assert.equal(textExceedsJsonDepth(bytes(nested(MAX_JSON_DEPTH + 1))), true);
  });
});

describe('valueExceedsJsonDepth', () => {
  it('agrees with the text check on parsed values', () => {
    for (const depth of [1, 50, MAX_JSON_DEPTH, MAX_JSON_DEPTH + 1, 5000]) {
      const text = nested(depth);
      assert.equal(valueExceedsJsonDepth(JSON.parse(text)), textExceedsJsonDepth(bytes(text)), `depth ${depth}`);
    }
  });

  it('counts object nesting and ignores scalars', () => {
    assert.equal(valueExceedsJsonDepth({ a: { b: { c: 'x' } } }, 3), false);
    assert.equal(valueExceedsJsonDepth({ a: { b: { c: {} } } }, 3), true);
    assert.equal(valueExceedsJsonDepth('just text', 0), false);
  });

  it('terminates on a cyclic value', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic['self'] = cyclic;
    assert.equal(valueExceedsJsonDepth(cyclic, 10), true);
  });
});
