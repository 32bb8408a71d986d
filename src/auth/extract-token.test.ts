import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createTokenVerifier } from './create-token-verifier.js';
import { extractToken } from './extract-token.js';

describe('extractToken', () => {
  const cases: Array<[string, Record<string, string>, string | undefined]> = [
    ['bearer', { authorization: 'Bearer abc' }, 'abc'],
    ['bearer, any case, extra spaces', { authorization: 'bEaReR   abc  ' }, 'abc'],
    ['x-hookgate-token', { 'x-hookgate-token': 'abc' }, 'abc'],
    ['x-openclaw-token alias', { 'x-openclaw-token': 'abc' }, 'abc'],
    ['basic auth is not a carrier', { authorization: 'Basic abc' }, undefined],
    ['bearer without a value', { authorization: 'Bearer ' }, undefined],
    ['nothing', {}, undefined],
  ];
  for (const [name, headers, want] of cases) {
    it(`reads ${name}`, () => assert.equal(extractToken(headers), want));
  }
});

describe('createTokenVerifier', () => {
  const verify = createTokenVerifier('s3cret');
  it('accepts the token', () => assert.equal(verify('s3cret'), true));
  it('refuses a wrong token, a prefix, a longer one and none', () => {
    for (const t of ['nope', 's3cre', 's3crett', '', undefined]) assert.equal(verify(t), false, String(t));
  });
  it('judges each candidate alone, whatever came before it', () => {
    // A longer candidate leaves nothing behind for a shorter one that is its prefix.
    assert.equal(verify('s3cretXYZ'), false);
    assert.equal(verify('s3cre'), false);
    assert.equal(verify('s3cret'), true);
    assert.equal(verify('s3cre\u0000'), false);
  });
  it('compares bytes, not characters', () => {
    const wide = createTokenVerifier('tök€n');
    assert.equal(wide('tök€n'), true);
    for (const t of ['tok€n', 'tök€', 'tök€n€', 'tökn\u20ac'.slice(0, 4)]) assert.equal(wide(t), false, t);
  });
  it('with an empty expected token, accepts nothing', () => {
    const none = createTokenVerifier('');
    assert.equal(none(''), false);
    assert.equal(none(undefined), false);
    assert.equal(none('x'), false);
  });
});
