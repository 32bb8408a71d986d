import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { type Config, safeParseConfig } from '../config/index.js';
import { readRunBudgets, resolveRunBudgets } from './resolve-run-budgets.js';

const parse = (raw: Record<string, unknown>) => safeParseConfig(raw, { path: '/etc/hookgate/hookgate.json', env: {} });
function config(raw: Record<string, unknown>): Config {
  const r = parse(raw);
  if (!r.ok) throw new Error(JSON.stringify(r.issues));
  return r.loaded.config;
}

describe('resolveRunBudgets', () => {
  it('is undefined when no budget is set, so claims count nothing', () => {
    assert.equal(resolveRunBudgets(config({ agents: { list: [{ id: 'main' }] } })), undefined);
  });

  it('gives every agent the default budget under its own, field by field, and the default agent too', () => {
    const b = resolveRunBudgets(
      config({
        agents: {
          defaults: { budget: { runsPerHour: 10, tokensPerDay: 1000 } },
          list: [{ id: 'main' }, { id: 'ops', budget: { runsPerHour: 2 } }],
        },
      }),
    );
    assert.deepEqual(b?.agents, {
      main: { runsPerHour: 10, tokensPerDay: 1000 },
      ops: { runsPerHour: 2, tokensPerDay: 1000 },
    });
    assert.deepEqual(resolveRunBudgets(config({ agents: { defaults: { budget: { runsPerHour: 3 } } } }))?.agents, {
      main: { runsPerHour: 3 },
    });
  });

  it("keys a mapping's budget by its hook name: its id, else its place in the list", () => {
    const b = resolveRunBudgets(
      config({
        hooks: {
          enabled: true,
          token: 'budget-test-token-0123',
          mappings: [
            { id: 'gh', match: { path: 'gh' }, budget: { maxConcurrentRuns: 2 } },
            { match: { path: 'x' } },
            { match: { path: 'y' }, budget: { runsPerHour: 1 } },
          ],
        },
      }),
    );
    assert.deepEqual(b, { agents: {}, hooks: { gh: { maxConcurrentRuns: 2 }, 'mappings[2]': { runsPerHour: 1 } } });
  });

  it('refuses budgets that are not positive whole numbers, and unknown fields', () => {
    for (const budget of [{ runsPerHour: 0 }, { tokensPerDay: 1.5 }, { runsPerHour: -1 }, { perMinute: 3 }]) {
      const r = parse({ agents: { defaults: { budget } } });
      assert.equal(r.ok, false, JSON.stringify(budget));
    }
    assert.equal(
      parse({ agents: { defaults: { budget: { maxConcurrentRuns: 2 } } } }).ok,
      false,
      "maxConcurrentRuns is a mapping's",
    );
  });
});

describe('readRunBudgets', () => {
  it('works the budgets out again only when the config changes', () => {
    let current = config({ agents: { defaults: { budget: { runsPerHour: 1 } } } });
    const read = readRunBudgets(() => current);
    const first = read();
    assert.equal(read(), first);
    current = config({ agents: { defaults: { budget: { runsPerHour: 2 } } } });
    assert.deepEqual(read()?.agents, { main: { runsPerHour: 2 } });
  });
});
