import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { findInvalidExpressions, renderTemplate, type TemplateContext } from './render-template.js';

const context: TemplateContext = {
  payload: {
    action: 'opened',
    number: 12,
    draft: false,
    pull_request: { title: 'Fix login', user: { login: 'octocat' }, labels: [{ name: 'bug' }, { name: 'auth' }] },
    messages: [{ id: 'm1', from: 'Alice <a@example.com>' }],
    nothing: null,
    'x-dash': 'dashed',
  },
  headers: { 'x-github-event': 'pull_request', 'user-agent': 'GitHub-Hookshot/abc' },
  query: { source: 'ci' },
  path: 'github',
  now: '2026-01-02T03:04:05.000Z',
};

describe('renderTemplate', () => {
  const cases: Array<[string, string, string]> = [
    ['payload root', '{{payload.action}}', 'opened'],
    ['bare path reads the payload', '{{action}}', 'opened'],
    ['spaces inside the braces', '{{  pull_request.title  }}', 'Fix login'],
    ['nested objects', '{{payload.pull_request.user.login}}', 'octocat'],
    ['array index', '{{messages[0].id}}', 'm1'],
    ['index then key', '{{pull_request.labels[1].name}}', 'auth'],
    ['numbers', '#{{number}}', '#12'],
    ['booleans', '{{draft}}', 'false'],
    ['null renders empty', '[{{nothing}}]', '[]'],
    ['missing key renders empty', '[{{payload.nope.deeper}}]', '[]'],
    ['index out of range renders empty', '[{{messages[5].id}}]', '[]'],
    ['index on a non-array renders empty', '[{{pull_request[0]}}]', '[]'],
    ['objects render as JSON', '{{pull_request.user}}', '{"login":"octocat"}'],
    ['arrays render as JSON', '{{pull_request.labels[0]}}', '{"name":"bug"}'],
    ['headers root (lower-case names)', '{{headers.x-github-event}}', 'pull_request'],
    ['query root', '{{query.source}}', 'ci'],
    ['path root', '/{{path}}', '/github'],
    ['now root', '{{now}}', '2026-01-02T03:04:05.000Z'],
    ['dashed keys', '{{x-dash}}', 'dashed'],
    [
      'several tags and text',
      '{{headers.x-github-event}} {{action}} by {{pull_request.user.login}}',
      'pull_request opened by octocat',
    ],
    ['__proto__ resolves to nothing', '[{{__proto__}}]', '[]'],
    ['payload.__proto__ resolves to nothing', '[{{payload.__proto__.toString}}]', '[]'],
    ['constructor resolves to nothing', '[{{constructor.name}}]', '[]'],
    ['prototype resolves to nothing', '[{{pull_request.prototype}}]', '[]'],
    ['inherited members resolve to nothing', '[{{pull_request.toString}}]', '[]'],
    ['a call is not evaluated', '[{{action.toUpperCase()}}]', '[]'],
    ['an operator is not evaluated', '[{{number + 1}}]', '[]'],
    ['a JS expression is not evaluated', '[{{process.exit(1)}}]', '[]'],
    ['an empty tag renders empty', '[{{}}]', '[]'],
    ['text without tags is kept', 'plain text', 'plain text'],
  ];
  for (const [name, template, want] of cases) {
    it(`renders ${name}`, () => assert.equal(renderTemplate(template, context), want));
  }

  it('does not touch Object.prototype', () => {
    renderTemplate('{{__proto__.polluted}}', {
      ...context,
      payload: JSON.parse('{"__proto__":{"polluted":"yes"}}') as unknown,
    });
    assert.equal(({} as Record<string, unknown>)['polluted'], undefined);
  });
});

describe('findInvalidExpressions', () => {
  it('lists expressions that are not plain paths', () => {
    assert.deepEqual(findInvalidExpressions('{{a.b}} {{a()}} {{x + 1}} {{messages[0].id}}'), ['a()', 'x + 1']);
  });
});
