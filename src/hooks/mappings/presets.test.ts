import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { HooksSchema, type HooksConfig } from '../../config/index.js';
import { createPresets, type Preset } from './presets.js';

function hooks(raw: Record<string, unknown>): HooksConfig {
  return HooksSchema.parse({ enabled: true, token: 'unit-test-token', ...raw });
}

function gmail(settings?: Record<string, unknown>): Preset {
  const [preset, ...rest] = createPresets(
    hooks({ presets: ['gmail'], ...(settings === undefined ? {} : { gmail: settings }) }),
  );
  assert.equal(rest.length, 0);
  assert.ok(preset !== undefined);
  return preset;
}

describe('createPresets', () => {
  it('creates nothing when no preset is enabled', () => {
    assert.deepEqual(createPresets(hooks({})), []);
  });

  it('maps /hooks/gmail to one agent run per message, named Gmail, one session per message id', () => {
    const { mapping } = gmail();
    assert.deepEqual(mapping.match, { path: 'gmail' });
    assert.equal(mapping.id, 'gmail');
    assert.equal(mapping.action, 'agent');
    assert.equal(mapping.name, 'Gmail');
    assert.deepEqual(mapping.forEach, { path: 'messages', maxItems: 100, idPath: 'id' });
    assert.equal(mapping.sessionKey, 'hook:gmail:{{item.id}}');
    for (const field of ['from', 'subject', 'snippet', 'body']) {
      assert.ok(mapping.messageTemplate?.includes(`{{item.${field}}}`), field);
    }
  });

  it('leaves model, thinking and the unsafe flag unset without hooks.gmail', () => {
    const { mapping } = gmail();
    assert.equal(mapping.model, undefined);
    assert.equal(mapping.thinking, undefined);
    assert.equal(mapping.allowUnsafeExternalContent, undefined);
  });

  it('applies hooks.gmail model, thinking and allowUnsafeExternalContent', () => {
    const { mapping } = gmail({
      model: 'echo/mail',
      thinking: 'low',
      allowUnsafeExternalContent: true,
      account: 'me@example.com',
    });
    assert.equal(mapping.model, 'echo/mail');
    assert.equal(mapping.thinking, 'low');
    assert.equal(mapping.allowUnsafeExternalContent, true);
  });
});

describe('gmail preset payload check', () => {
  const ok = { messages: [{ id: '19a4c7e2b81f03d5', from: 'a@example.com', subject: 's', snippet: 'x', body: 'y' }] };
  const cases: Array<[string, Record<string, unknown>, string | null]> = [
    ['a watcher payload', ok, null],
    ['only an id', { messages: [{ id: 'abc' }] }, null],
    ['no messages', {}, 'messages'],
    ['messages not an array', { messages: { id: 'abc' } }, 'messages'],
    ['an empty messages array', { messages: [] }, 'messages'],
    ['a null first message', { messages: [null] }, 'messages[0].id'],
    ['a string first message', { messages: ['abc'] }, 'messages[0].id'],
    ['a second message without id', { messages: [{ id: 'a' }, { from: 'b@example.com' }] }, 'messages[1].id'],
    ['a first message without id', { messages: [{ from: 'a@example.com' }] }, 'messages[0].id'],
    ['a numeric id', { messages: [{ id: 42 }] }, 'messages[0].id'],
    ['an empty id', { messages: [{ id: '' }] }, 'messages[0].id'],
  ];
  for (const [what, payload, path] of cases) {
    it(`${path === null ? 'accepts' : `names ${path} for`} ${what}`, () => {
      const { validate } = gmail();
      assert.ok(validate !== undefined);
      const issues = validate(payload);
      if (path === null) assert.deepEqual(issues, []);
      else
        assert.deepEqual(
          issues.map((i) => i.path),
          [path],
        );
    });
  }
});
