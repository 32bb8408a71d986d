import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { HooksSchema } from '../config/schema.js';
import { createHookLabeler } from './create-hook-labeler.js';

const hooksOf = (mappings: unknown[]) => HooksSchema.parse({ enabled: true, token: 't', mappings });

describe('createHookLabeler', () => {
  const cases: Array<[string, string | null, string]> = [
    ['wake keeps its name', 'wake', 'wake'],
    ['agent keeps its name', 'agent', 'agent'],
    ['a mapping path keeps its name', 'github', 'github'],
    ['an unknown name is _other', 'guess-123', '_other'],
    ['no hook at all is _none', null, '_none'],
  ];
  const label = createHookLabeler(() => hooksOf([{ match: { path: '/github/' }, action: 'wake', textTemplate: 'x' }]));
  for (const [name, hook, expected] of cases) {
    it(name, () => assert.equal(label(hook), expected));
  }

  it('follows a reloaded config', () => {
    let hooks = hooksOf([]);
    const l = createHookLabeler(() => hooks);
    assert.equal(l('stripe'), '_other');
    hooks = hooksOf([{ match: { path: 'stripe' }, action: 'wake', textTemplate: 'x' }]);
    assert.equal(l('stripe'), 'stripe');
  });
});
