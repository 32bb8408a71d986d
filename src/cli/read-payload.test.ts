import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readPayload, type PayloadRead } from './read-payload.js';

const nested = (levels: number): string => `${'['.repeat(levels)}1${']'.repeat(levels)}`;

describe('readPayload', () => {
  const cases: Array<[string, { data?: string; file?: string }, PayloadRead]> = [
    ['a JSON object', { data: '{"a":1}' }, { kind: 'json', text: '{"a":1}', value: { a: 1 } }],
    [
      "a value nested 100 levels (the gateway's bound)",
      { data: nested(100) },
      { kind: 'json', text: nested(100), value: JSON.parse(nested(100)) as unknown },
    ],
    ['a value nested 101 levels, left unparsed', { data: nested(101) }, { kind: 'too_deep', text: nested(101) }],
    [
      'deep text that is not valid JSON either, refused for its depth first as the gateway does',
      { data: `${nested(5000)},` },
      { kind: 'too_deep', text: `${nested(5000)},` },
    ],
    [
      'both --data and --file',
      { data: '{}', file: 'p.json' },
      { kind: 'unusable', message: 'give --data or --file, not both' },
    ],
    ['neither', {}, { kind: 'unusable', message: 'needs a payload: --data JSON or --file PAYLOAD.json' }],
  ];
  for (const [what, options, expected] of cases) {
    it(`reads ${what}`, () => assert.deepEqual(readPayload(options), expected));
  }

  it('says why text is not JSON', () => {
    const r = readPayload({ data: '{oops' });
    assert.equal(r.kind, 'unusable');
    if (r.kind === 'unusable') assert.match(r.message, /^the payload is not valid JSON: /);
  });
});
