import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createBudgetPlan, hasBudgets, heldReason, sameLimit, type BudgetUsage } from './run-budgets.js';

const usage = (o: Partial<BudgetUsage> = {}): BudgetUsage => ({ started: 0, tokens: 0, running: 0, ...o });
const none = { agents: new Map<string, BudgetUsage>(), hooks: new Map<string, BudgetUsage>() };

describe('run budgets', () => {
  it('tells reasons naming the same limit apart from reasons naming another', () => {
    const tokens = (n: number, limit = 1000) =>
      heldReason('hooks', 'gh', { tokensPerDay: limit }, usage({ tokens: n }));
    const runs = (n: number) =>
      heldReason('hooks', 'gh', { runsPerHour: 1, tokensPerDay: 1000 }, usage({ started: n, tokens: 5000 }));
    assert.equal(sameLimit(tokens(1200), tokens(1100)), true);
    assert.equal(sameLimit(runs(1), runs(2)), true, '"1 run" and "2 runs" name the same limit');
    assert.equal(sameLimit(tokens(1200), tokens(1200, 900)), false, 'the limit changed');
    assert.equal(sameLimit(runs(1), tokens(5000)), false, 'another limit of the key');
    assert.equal(sameLimit(null, null), true);
    assert.equal(sameLimit(tokens(1200), null), false);
    assert.equal(sameLimit(null, tokens(1200)), false);
  });

  it('names the first limit a key is at, or none', () => {
    assert.equal(heldReason('agents', 'main', { runsPerHour: 3 }, usage({ started: 2 })), null);
    assert.equal(
      heldReason('agents', 'main', { runsPerHour: 3 }, usage({ started: 3 })),
      'agent "main": 3 runs started in the last hour (runsPerHour 3)',
    );
    assert.equal(
      heldReason('hooks', 'gh', { tokensPerDay: 1000 }, usage({ tokens: 1200 })),
      'mapping "gh": 1,200 tokens spent in the last 24 h (tokensPerDay 1,000)',
    );
    assert.equal(
      heldReason('hooks', 'gh', { maxConcurrentRuns: 1 }, usage({ running: 1 })),
      'mapping "gh": 1 run running (maxConcurrentRuns 1)',
    );
  });

  it("takes starts until a key's room is used up, then blocks it; a run started before counts as running only", () => {
    const plan = createBudgetPlan(
      { agents: { main: { runsPerHour: 2 } }, hooks: { gh: { maxConcurrentRuns: 3 } } },
      none,
    );
    assert.equal(plan.take('main', 'gh', true), true, 'a restart of a run does not spend runsPerHour');
    assert.equal(plan.take('main', 'gh'), true);
    assert.equal(plan.blocked.agents.size, 0);
    assert.equal(plan.take('main', 'gh'), true);
    assert.match(plan.blocked.agents.get('main')!, /2 runs started/);
    assert.match(plan.blocked.hooks.get('gh')!, /3 runs running/);
    assert.equal(plan.take('main', null), false);
    assert.equal(plan.take('ops', 'other'), true, 'keys without a budget are never held');
    assert.deepEqual(JSON.parse(plan.heldJson().agents), { main: plan.blocked.agents.get('main') });
  });

  it('lets a run started before restart past runsPerHour, but not past spent tokens or maxConcurrentRuns', () => {
    const plan = createBudgetPlan(
      { agents: { main: { runsPerHour: 1 } }, hooks: { mail: { tokensPerDay: 100 }, gh: { maxConcurrentRuns: 1 } } },
      { agents: new Map([['main', usage({ started: 1 })]]), hooks: new Map([['mail', usage({ tokens: 100 })]]) },
    );
    assert.equal(plan.take('main', null), false, 'a new start is held');
    assert.equal(plan.take('main', null, true), true, 'a restart is not');
    assert.equal(plan.take('main', 'mail', true), false, 'the mapping spent its tokens');
    assert.equal(plan.take('ops', 'gh', true), true);
    assert.equal(plan.take('ops', 'gh', true), false, 'one gh run running already');
    assert.equal(heldReason('agents', 'main', { runsPerHour: 1 }, usage({ started: 1 }), true), null);
    const held = plan.heldJson();
    assert.deepEqual(Object.keys(JSON.parse(held.agents)), ['main']);
    assert.deepEqual(JSON.parse(held.restartAgents), {});
    assert.deepEqual(Object.keys(JSON.parse(held.restartHooks)).sort(), ['gh', 'mail']);
  });

  it('knows when no budget is set', () => {
    assert.equal(hasBudgets(undefined), false);
    assert.equal(hasBudgets({ agents: {}, hooks: {} }), false);
    assert.equal(hasBudgets({ agents: {}, hooks: { a: { runsPerHour: 1 } } }), true);
  });
});
