import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { changedKeys, heldKeysOf, mergeCandidates, reopenedKeys, type HeldKey } from './held-keys.js';
import { createBudgetPlan, type BudgetUsage } from './run-budgets.js';

const usage = (o: Partial<BudgetUsage> = {}): BudgetUsage => ({ started: 0, tokens: 0, running: 0, ...o });
const held = (scope: HeldKey['scope'], key: string, reason: string, restartReason: string | null = null): HeldKey => ({ scope, key, reason, restartReason });

describe('held keys', () => {
  const plan = () => createBudgetPlan(
    { agents: { main: { runsPerHour: 1 } }, hooks: { mail: { tokensPerDay: 10 }, gh: { runsPerHour: 5 } } },
    { agents: new Map([['main', usage({ started: 1 })]]), hooks: new Map([['mail', usage({ tokens: 20 })]]) },
  );

  it('lists the keys a plan holds, with the reason for restarts where restarts are held too', () => {
    const keys = heldKeysOf(plan());
    assert.deepEqual(keys.map((k) => [k.scope, k.key, k.restartReason === null]), [['agents', 'main', true], ['hooks', 'mail', false]]);
    assert.match(keys[0]!.reason, /runsPerHour 1/);
    assert.deepEqual(heldKeysOf(null), []);
  });

  it('rewrites the runs of the keys whose reasons changed, both ways, and no others', () => {
    const a = held('agents', 'main', 'r1');
    const b = held('hooks', 'mail', 'r2', 'r2');
    assert.deepEqual(changedKeys([a, b], [a, b]), { agents: [], hooks: [] });
    assert.deepEqual(changedKeys([a], [a, b]), { agents: [], hooks: ['mail'] }, 'newly held');
    assert.deepEqual(changedKeys([a, b], [b]), { agents: ['main'], hooks: [] }, 'let go');
    assert.deepEqual(changedKeys([a, b], [{ ...a, reason: 'r3' }, { ...b, restartReason: null }]), { agents: ['main'], hooks: ['mail'] }, 'reasons changed');
    assert.deepEqual(changedKeys([a], [held('hooks', 'main', 'r1')]), { agents: ['main'], hooks: ['main'] }, 'one name in two scopes is two keys');
  });

  it('reopens a marked key the plan lets new runs or restarts through again', () => {
    const p = plan();
    const marked = [held('agents', 'main', 'old'), held('hooks', 'mail', 'old', 'old'), held('hooks', 'gh', 'old', 'old'), held('agents', 'ops', 'old', 'old')];
    assert.deepEqual(reopenedKeys(marked, p), { agents: ['ops'], hooks: ['gh'] });
    assert.deepEqual(reopenedKeys([held('hooks', 'mail', 'old', null)], p), { agents: [], hooks: [] }, 'still held for new starts; restarts were never marked');
    const q = createBudgetPlan({ agents: { main: { runsPerHour: 1 } }, hooks: {} }, { agents: new Map([['main', usage({ started: 1 })]]), hooks: new Map() });
    assert.deepEqual(reopenedKeys([held('agents', 'main', 'tokens', 'tokens')], q), { agents: ['main'], hooks: [] }, 'restarts pass again');
  });

  it('merges candidate lists in seq order, each run once, up to the limit', () => {
    const r = (id: string, seq: number) => ({ id, seq });
    assert.deepEqual(mergeCandidates([[r('a', 1), r('c', 5)], [r('b', 3), r('c', 5)], [r('d', 2)]], 3).map((x) => x.id), ['a', 'd', 'b']);
    const s = (id: string, seq: string) => ({ id, seq });
    assert.deepEqual(mergeCandidates([[s('a', '10')], [s('b', '9')]], 5).map((x) => x.id), ['b', 'a'], 'PostgreSQL\'s bigint seqs compare as numbers');
  });
});
