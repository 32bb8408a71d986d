import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Issue } from '../common/errors.js';
import { substituteEnv } from './substitute-env.js';

describe('substituteEnv', () => {
  const env = { TOKEN: 'abc', PORT: '9000' };
  const cases: Array<[string, unknown, unknown]> = [
    ['a whole string', '${TOKEN}', 'abc'],
    ['inside a string', 'Bearer ${TOKEN}!', 'Bearer abc!'],
    ['two variables', '${TOKEN}:${PORT}', 'abc:9000'],
    ['an escaped $${', '$${TOKEN}', '${TOKEN}'],
    ['nested objects and arrays', { a: ['${PORT}', { b: '${TOKEN}' }] }, { a: ['9000', { b: 'abc' }] }],
    ['non-strings untouched', { n: 1, b: true, z: null }, { n: 1, b: true, z: null }],
    ['lower-case ${} left alone when not a name', '${1X}', '${1X}'],
  ];
  for (const [name, input, want] of cases) {
    it(`substitutes ${name}`, () => {
      const issues: Issue[] = [];
      assert.deepEqual(substituteEnv(input, env, issues), want);
      assert.deepEqual(issues, []);
    });
  }

  it('reports an unset variable at its dot-path', () => {
    const issues: Issue[] = [];
    substituteEnv({ hooks: { list: ['x', '${MISSING}'] } }, env, issues);
    assert.deepEqual(issues, [{ path: 'hooks.list[1]', message: 'environment variable MISSING is not set' }]);
  });
});
