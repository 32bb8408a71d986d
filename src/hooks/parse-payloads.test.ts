import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { RequestError } from '../common/errors.js';
import { parseAgentPayload } from './parse-agent-payload.js';
import { parseWakePayload } from './parse-wake-payload.js';

function issuePaths(fn: () => unknown): string[] {
  try {
    fn();
  } catch (error) {
    assert.ok(error instanceof RequestError);
    assert.equal(error.code, 'invalid_payload');
    return (error.issues ?? []).map((i) => i.path);
  }
  assert.fail('expected invalid_payload');
}

describe('parseWakePayload', () => {
  it('defaults mode to now', () => assert.deepEqual(parseWakePayload({ text: 'x' }), { text: 'x', mode: 'now' }));
  it('keeps next-heartbeat', () =>
    assert.equal(parseWakePayload({ text: 'x', mode: 'next-heartbeat' }).mode, 'next-heartbeat'));
  it('ignores unknown fields', () =>
    assert.deepEqual(parseWakePayload({ text: 'x', extra: 1 }), { text: 'x', mode: 'now' }));
  const bad: Array<[string, Record<string, unknown>, string[]]> = [
    ['missing text', {}, ['text']],
    ['null text', { text: null }, ['text']],
    ['numeric text', { text: 5 }, ['text']],
    ['blank text', { text: '  ' }, ['text']],
    ['mode outside the enum', { text: 'x', mode: 'later' }, ['mode']],
    ['mode of the wrong type', { text: 'x', mode: true }, ['mode']],
    ['both at once', { mode: 'x' }, ['text', 'mode']],
  ];
  for (const [name, payload, want] of bad) {
    it(`names the field for ${name}`, () =>
      assert.deepEqual(
        issuePaths(() => parseWakePayload(payload)),
        want,
      ));
  }
});

describe('parseAgentPayload', () => {
  it('fills the spec defaults', () => {
    assert.deepEqual(parseAgentPayload({ message: 'm' }), {
      message: 'm',
      wakeMode: 'now',
      deliver: true,
      channel: 'last',
    });
  });
  it('keeps every optional field', () => {
    const p = parseAgentPayload({
      message: 'm',
      name: 'Mail',
      agentId: 'ops',
      sessionKey: 'hook:1',
      wakeMode: 'next-heartbeat',
      deliver: false,
      channel: 'telegram',
      to: '123',
      model: 'openai/gpt',
      thinking: 'high',
      timeoutSeconds: 1.5,
    });
    assert.deepEqual(p, {
      message: 'm',
      name: 'Mail',
      agentId: 'ops',
      sessionKey: 'hook:1',
      wakeMode: 'next-heartbeat',
      deliver: false,
      channel: 'telegram',
      to: '123',
      model: 'openai/gpt',
      thinking: 'high',
      timeoutSeconds: 1.5,
    });
  });
  const bad: Array<[string, Record<string, unknown>, string[]]> = [
    ['missing message', {}, ['message']],
    ['deliver as a string', { message: 'm', deliver: 'true' }, ['deliver']],
    ['wakeMode outside the enum', { message: 'm', wakeMode: 'soon' }, ['wakeMode']],
    ['channel outside the enum', { message: 'm', channel: 'email' }, ['channel']],
    ['timeoutSeconds zero', { message: 'm', timeoutSeconds: 0 }, ['timeoutSeconds']],
    ['timeoutSeconds negative', { message: 'm', timeoutSeconds: -3 }, ['timeoutSeconds']],
    ['timeoutSeconds as a string', { message: 'm', timeoutSeconds: '30' }, ['timeoutSeconds']],
    ['timeoutSeconds past a day', { message: 'm', timeoutSeconds: 86_401 }, ['timeoutSeconds']],
    ['thinking outside the levels', { message: 'm', thinking: 'max' }, ['thinking']],
    ['agentId not a string', { message: 'm', agentId: 7 }, ['agentId']],
    ['sessionKey blank', { message: 'm', sessionKey: '' }, ['sessionKey']],
    ['several at once', { deliver: 1, channel: 2 }, ['message', 'deliver', 'channel']],
  ];
  for (const [name, payload, want] of bad) {
    it(`names the field for ${name}`, () =>
      assert.deepEqual(
        issuePaths(() => parseAgentPayload(payload)),
        want,
      ));
  }
});

describe('text fields', () => {
  it('records wake text and agent message trimmed', () => {
    assert.equal(parseWakePayload({ text: '  \n Deploy finished \t\n' }).text, 'Deploy finished');
    assert.equal(parseAgentPayload({ message: '\n  Summarise the log  ' }).message, 'Summarise the log');
  });

  it('keeps inner whitespace and line breaks', () => {
    assert.equal(parseWakePayload({ text: ' line one\n\n  line two ' }).text, 'line one\n\n  line two');
  });

  it('refuses an unpaired surrogate, naming the field', () => {
    assert.deepEqual(
      issuePaths(() => parseWakePayload({ text: 'a\ud800b' })),
      ['text'],
    );
    assert.deepEqual(
      issuePaths(() => parseAgentPayload({ message: 'ok', name: '\udc00' })),
      ['name'],
    );
  });
  it('refuses a NUL character, naming the field', () => {
    assert.deepEqual(
      issuePaths(() => parseWakePayload({ text: 'a\u0000b' })),
      ['text'],
    );
    assert.deepEqual(
      issuePaths(() => parseAgentPayload({ message: 'ok', sessionKey: 'hook:\u0000' })),
      ['sessionKey'],
    );
  });
  it('accepts paired surrogates (emoji)', () => {
    assert.equal(parseWakePayload({ text: 'party \ud83c\udf89' }).text, 'party \ud83c\udf89');
  });
});
