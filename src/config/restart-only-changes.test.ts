import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { safeParseConfig } from './load-config.js';
import { restartOnlyChanges } from './restart-only-changes.js';
import type { Config } from './schema.js';

function config(raw: Record<string, unknown>): Config {
  const r = safeParseConfig(raw, { path: '/etc/hookgate/hookgate.json', env: {} });
  if (!r.ok) throw new Error(JSON.stringify(r.issues));
  return r.loaded.config;
}

describe('restartOnlyChanges', () => {
  const base = { hooks: { enabled: true, token: 'restart-test-token-a1' } };

  it('is empty when only reloadable keys change (token, mappings, channels)', () => {
    const next = {
      hooks: { enabled: true, token: 'restart-test-token-b2', mappings: [{ match: { path: 'x' } }] },
      channels: { telegram: { botToken: '1:a' } },
    };
    assert.deepEqual(restartOnlyChanges(config(base), config(next)), []);
  });

  it('names each restart-only key that changed', () => {
    const next = {
      ...base,
      hooks: { ...base.hooks, authRateLimit: { maxFailures: 3 } },
      gateway: { port: 9999 },
      agents: { defaults: { timeoutSeconds: 30 } },
    };
    assert.deepEqual(restartOnlyChanges(config(base), config(next)), ['gateway', 'agents', 'hooks.authRateLimit']);
    const fewer = { ...base, hooks: { ...base.hooks, maxTransformProcesses: 2 } };
    assert.deepEqual(restartOnlyChanges(config(base), config(fewer)), ['hooks.maxTransformProcesses']);
  });

  it("applies agents' budgets at a reload, while other agent settings still need a restart", () => {
    const budgeted = {
      ...base,
      agents: { defaults: { budget: { runsPerHour: 5 } }, list: [{ id: 'main', budget: { tokensPerDay: 9 } }] },
    };
    assert.deepEqual(restartOnlyChanges(config({ ...base, agents: { list: [{ id: 'main' }] } }), config(budgeted)), []);
    assert.deepEqual(
      restartOnlyChanges(
        config(budgeted),
        config({ ...budgeted, agents: { ...budgeted.agents, list: [{ id: 'ops' }] } }),
      ),
      ['agents'],
    );
  });
});
