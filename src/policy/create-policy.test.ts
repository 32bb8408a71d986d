import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { RequestError } from '../common/errors.js';
import { createIds } from '../common/ids.js';
import { safeParseConfig } from '../config/index.js';
import { createPolicy, type AgentRequest } from './create-policy.js';

const source = { hook: 'agent', external: true, allowUnsafeExternalContent: false };
const base: AgentRequest = { message: 'm', wakeMode: 'now', deliver: true, channel: 'last', source };

function policyFor(
  hooks: Record<string, unknown> = {},
  agents: Record<string, unknown> = {},
  models: Record<string, unknown> = {},
) {
  const r = safeParseConfig(
    {
      hooks: { enabled: true, token: 'policy-test-token-0123', ...hooks },
      agents: { list: [{ id: 'main' }, { id: 'ops', default: true }], ...agents },
      models,
    },
    { path: '/x/hookgate.json', env: {} },
  );
  if (!r.ok) throw new Error(JSON.stringify(r.issues));
  return createPolicy({
    config: r.loaded.config,
    ids: createIds(),
    clock: { now: () => 42, sleep: async () => undefined },
  });
}

function codeOf(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    assert.ok(error instanceof RequestError);
    return error.code;
  }
  return 'ok';
}

describe('createPolicy: wake', () => {
  it('puts the event on the default agent main session', () => {
    const e = policyFor().resolveWake({ text: 't', mode: 'now', source });
    assert.equal(e.agentId, 'ops');
    assert.equal(e.sessionKey, 'agent:ops:main');
    assert.equal(e.createdAt, 42);
  });
});

describe('createPolicy: agentId', () => {
  const cases: Array<[string, unknown, string | undefined, string]> = [
    ['omitted list allows any', undefined, 'main', 'ok'],
    ['* allows any', ['*'], 'main', 'ok'],
    ['[] denies an explicit agentId', [], 'main', 'agent_not_allowed'],
    ['[] still allows no agentId', [], undefined, 'ok'],
    ['a list allows a listed agent', ['main'], 'main', 'ok'],
    ['a list denies an unlisted agent', ['main'], 'ops', 'agent_not_allowed'],
    ['an unknown id resolves to the default, then is checked', ['ops'], 'ghost', 'ok'],
    ['an unknown id is denied when the default is not listed', ['main'], 'ghost', 'agent_not_allowed'],
  ];
  for (const [name, allowed, agentId, want] of cases) {
    it(name, () => {
      const policy = policyFor(allowed === undefined ? {} : { allowedAgentIds: allowed });
      const req: AgentRequest = agentId === undefined ? base : { ...base, agentId };
      assert.equal(
        codeOf(() => policy.resolveAgentRun(req)),
        want,
      );
    });
  }
  it('falls back to the default agent for an unknown id', () => {
    assert.equal(policyFor().resolveAgentRun({ ...base, agentId: 'ghost' }).agentId, 'ops');
  });
});

describe('createPolicy: sessionKey', () => {
  it('refuses a request key unless allowRequestSessionKey', () => {
    assert.equal(
      codeOf(() => policyFor().resolveAgentRun({ ...base, sessionKey: 'hook:a' })),
      'session_key_not_allowed',
    );
  });
  it('holds an allowed request key to the prefixes', () => {
    const policy = policyFor({ allowRequestSessionKey: true, allowedSessionKeyPrefixes: ['hook:'] });
    assert.equal(policy.resolveAgentRun({ ...base, sessionKey: 'hook:a' }).sessionKey, 'hook:a');
    assert.equal(
      codeOf(() => policy.resolveAgentRun({ ...base, sessionKey: 'agent:ops:main' })),
      'session_key_not_allowed',
    );
  });
  it('holds a mapping key to the prefixes but not to allowRequestSessionKey', () => {
    const policy = policyFor({ allowedSessionKeyPrefixes: ['hook:'] });
    assert.equal(
      policy.resolveAgentRun({ ...base, sessionKey: 'hook:m', sessionKeyOrigin: 'mapping' }).sessionKey,
      'hook:m',
    );
    assert.equal(
      codeOf(() => policy.resolveAgentRun({ ...base, sessionKey: 'x:m', sessionKeyOrigin: 'mapping' })),
      'session_key_not_allowed',
    );
  });
  it('uses defaultSessionKey, else a fresh hook:<uuid>', () => {
    assert.equal(policyFor({ defaultSessionKey: 'hook:inbox' }).resolveAgentRun(base).sessionKey, 'hook:inbox');
    const policy = policyFor();
    const a = policy.resolveAgentRun(base).sessionKey;
    assert.match(a, /^hook:[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    assert.notEqual(a, policy.resolveAgentRun(base).sessionKey);
  });
});

describe('createPolicy: model', () => {
  const restricted = { defaults: { model: 'small', models: { 'echo/small': { alias: 'small' }, 'openai/gpt-x': {} } } };
  const providers = { providers: { openai: { api: 'openai' } } };
  it('resolves an alias to its ref', () => {
    assert.equal(policyFor({}, restricted, providers).resolveAgentRun({ ...base, model: 'small' }).model, 'echo/small');
  });
  it('accepts a listed ref and refuses an unlisted one', () => {
    const policy = policyFor({}, restricted, providers);
    assert.equal(policy.resolveAgentRun({ ...base, model: 'openai/gpt-x' }).model, 'openai/gpt-x');
    assert.equal(
      codeOf(() => policy.resolveAgentRun({ ...base, model: 'openai/gpt-y' })),
      'model_not_allowed',
    );
  });
  it('accepts any ref of a configured provider when the list is not restricted', () => {
    assert.equal(policyFor({}, {}, providers).resolveAgentRun({ ...base, model: 'openai/any' }).model, 'openai/any');
  });
  it('refuses a ref that is not provider/model, and an unknown provider', () => {
    assert.equal(
      codeOf(() => policyFor().resolveAgentRun({ ...base, model: 'gpt' })),
      'invalid_payload',
    );
    assert.equal(
      codeOf(() => policyFor().resolveAgentRun({ ...base, model: 'nope/gpt' })),
      'invalid_payload',
    );
  });
});

describe('createPolicy: channel', () => {
  it('refuses a concrete channel that is not configured when delivering', () => {
    assert.equal(
      codeOf(() => policyFor().resolveAgentRun({ ...base, channel: 'telegram' })),
      'channel_not_configured',
    );
  });
  it('allows it without delivery, and always allows last', () => {
    assert.equal(
      codeOf(() => policyFor().resolveAgentRun({ ...base, channel: 'telegram', deliver: false })),
      'ok',
    );
    assert.equal(
      codeOf(() => policyFor().resolveAgentRun({ ...base, channel: 'last' })),
      'ok',
    );
  });
});

describe('createPolicy: resolved run', () => {
  it('records every resolved field', () => {
    const run = policyFor({ defaultSessionKey: 'hook:d' }).resolveAgentRun({
      ...base,
      name: 'Mail',
      to: '1',
      thinking: 'low',
    });
    assert.equal(run.name, 'Mail');
    assert.equal(run.to, '1');
    assert.equal(run.thinking, 'low');
    assert.equal(run.timeoutSeconds, 600);
    assert.equal(run.model, null);
    assert.equal(run.channel, 'last');
    assert.equal(run.deliver, true);
    assert.equal(run.createdAt, 42);
  });
  it('names an unnamed run after its hook, never "Hook"', () => {
    assert.equal(policyFor().resolveAgentRun(base).name, 'agent');
  });
});
