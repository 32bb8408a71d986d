import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { RequestError } from '../common/errors.js';
import { isFormBody, parseFormObject, parseHookBody, parseJsonObject } from './parse-request-body.js';

describe('parseFormObject', () => {
  it('reads fields as strings, a repeated field as its values in order, __proto__ as a plain field', () => {
    const form = parseFormObject(Buffer.from('command=%2Fdeploy&text=web+1&tag=a&tag=b&tag=c&__proto__=x'));
    assert.deepEqual(Object.entries(form), [
      ['command', '/deploy'],
      ['text', 'web 1'],
      ['tag', ['a', 'b', 'c']],
      ['__proto__', 'x'],
    ]);
    assert.equal(Object.getPrototypeOf(form), null);
  });

  it('keeps every value of a field repeated 100,000 times, in order', () => {
    const body = Array.from({ length: 100_000 }, (_, i) => `k=${i}`).join('&');
    const values = parseFormObject(Buffer.from(body))['k'] as string[];
    assert.equal(values.length, 100_000);
    assert.equal(values[0], '0');
    assert.equal(values[99_999], '99999');
  });

  it('refuses an empty form', () => {
    assert.throws(
      () => parseFormObject(Buffer.from('  ')),
      (e) => e instanceof RequestError && e.code === 'invalid_body',
    );
  });
});

describe('parseJsonObject and isFormBody', () => {
  it('takes a JSON object and refuses other values', () => {
    assert.deepEqual(parseJsonObject(Buffer.from('{"a":1}')), { a: 1 });
    assert.throws(
      () => parseJsonObject(Buffer.from('[1]')),
      (e) => e instanceof RequestError && e.code === 'invalid_body',
    );
    assert.throws(
      () => parseJsonObject(Buffer.from('{')),
      (e) => e instanceof RequestError && e.code === 'invalid_json',
    );
  });

  it('knows a form body by its content type, parameters allowed', () => {
    assert.equal(isFormBody('application/x-www-form-urlencoded; charset=utf-8'), true);
    assert.equal(isFormBody('application/json'), false);
    assert.equal(isFormBody(undefined), false);
  });
});

describe('parseHookBody', () => {
  const FORM_TYPE = 'application/x-www-form-urlencoded';

  it('reads a JSON object sent under a form content type (curl -d) as JSON', () => {
    assert.deepEqual(parseHookBody(Buffer.from(' \n{"source":"ci","n":1}'), FORM_TYPE), { source: 'ci', n: 1 });
  });

  it('refuses a JSON array or broken JSON under a form content type as JSON, not as a form', () => {
    assert.throws(
      () => parseHookBody(Buffer.from('[1]'), FORM_TYPE),
      (e) => e instanceof RequestError && e.code === 'invalid_body',
    );
    assert.throws(
      () => parseHookBody(Buffer.from('{"a":'), FORM_TYPE),
      (e) => e instanceof RequestError && e.code === 'invalid_json',
    );
  });

  it('reads a form body declared as one as a form', () => {
    assert.deepEqual({ ...parseHookBody(Buffer.from('payload=%7B%7D&a=1'), FORM_TYPE) }, { payload: '{}', a: '1' });
  });

  it('reads a form-looking body declared as JSON as JSON (400)', () => {
    assert.throws(
      () => parseHookBody(Buffer.from('a=1'), 'application/json'),
      (e) => e instanceof RequestError && e.code === 'invalid_json',
    );
  });
});
