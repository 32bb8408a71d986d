import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  advancePass,
  marksBehind,
  mergeCandidates,
  nextHeldKeys,
  reopenedKeys,
  runPasses,
  type HeldKey,
} from './held-keys.js';
import { createBudgetPlan, type BudgetUsage } from './run-budgets.js';

const usage = (o: Partial<BudgetUsage> = {}): BudgetUsage => ({ started: 0, tokens: 0, running: 0, ...o });
const held = (
  scope: HeldKey['scope'],
  key: string,
  reason: string | null,
  restartReason: string | null = null,
  phase: HeldKey['phase'] = null,
): HeldKey => ({ scope, key, reason, restartReason, phase, cursor: 0 });

describe('held keys', () => {
  // main: runsPerHour spent (new runs held, restarts pass); mail: tokens spent (both held); gh: room left.
  const plan = () =>
    createBudgetPlan(
      { agents: { main: { runsPerHour: 1 } }, hooks: { mail: { tokensPerDay: 10 }, gh: { runsPerHour: 5 } } },
      { agents: new Map([['main', usage({ started: 1 })]]), hooks: new Map([['mail', usage({ tokens: 20 })]]) },
    );

  it('lists each key the plan holds, with a pass through its unmarked runs', () => {
    const { rows, changed } = nextHeldKeys([], plan());
    assert.equal(changed, true);
    assert.deepEqual(
      rows.map((k) => [k.scope, k.key, k.restartReason === null, k.phase, k.cursor]),
      [
        ['agents', 'main', true, 'new', 0],
        ['hooks', 'mail', false, 'new', 0],
      ],
    );
    assert.match(rows[0]!.reason!, /runsPerHour 1/);
    assert.deepEqual(nextHeldKeys([], null), { rows: [], changed: false });
  });

  it("keeps a pass going while its key's reasons stay, and starts over when they change", () => {
    const first = nextHeldKeys([], plan()).rows.map((k) => ({ ...k, phase: 'marked' as const, cursor: 40 }));
    assert.deepEqual(nextHeldKeys(first, plan()), { rows: first, changed: false });
    const changed = nextHeldKeys([{ ...first[0]!, reason: 'an older count' }, first[1]!], plan());
    assert.equal(changed.changed, true);
    assert.deepEqual([changed.rows[0]!.phase, changed.rows[0]!.cursor], ['unmarked', 0]);
    assert.deepEqual([changed.rows[1]!.phase, changed.rows[1]!.cursor], ['marked', 40]);
  });

  it("takes a key's new text without a pass when only the usage it reports moved, and keeps a pass in progress", () => {
    const mail = (tokens: number, tokensPerDay = 10) =>
      createBudgetPlan(
        { agents: {}, hooks: { mail: { tokensPerDay } } },
        { agents: new Map(), hooks: new Map([['mail', usage({ tokens })]]) },
      );
    const rested = { ...nextHeldKeys([], mail(20)).rows[0]!, phase: null, cursor: 0 };
    const moved = nextHeldKeys([], mail(15)).rows[0]!;
    assert.match(moved.reason!, /15 tokens spent/);
    assert.deepEqual(nextHeldKeys([rested], mail(15)), {
      rows: [{ ...rested, reason: moved.reason, restartReason: moved.restartReason }],
      changed: true,
    });
    const midPass = { ...rested, phase: 'marked' as const, cursor: 77 };
    assert.deepEqual(
      nextHeldKeys([midPass], mail(15)).rows.map((k) => [k.phase, k.cursor]),
      [['marked', 77]],
    );
    // Another limit (a reload lowered it) is a new pass.
    assert.deepEqual(
      nextHeldKeys([rested], mail(15, 12)).rows.map((k) => [k.phase, k.cursor]),
      [['unmarked', 0]],
    );
  });

  it('says marks are behind while a held key is unlisted or still marking its unmarked runs', () => {
    const marked = (phase: HeldKey['phase']) => nextHeldKeys([], plan()).rows.map((k) => ({ ...k, phase }));
    assert.equal(marksBehind([], plan()), true, 'held keys not listed yet');
    assert.equal(marksBehind(marked('new'), plan()), true);
    assert.equal(marksBehind(marked('unmarked'), plan()), true);
    assert.equal(marksBehind(marked('marked'), plan()), false, 'rewriting marked runs leaves none unmarked');
    assert.equal(marksBehind(marked(null), plan()), false);
    assert.equal(
      marksBehind([held('agents', 'ops', null, null, 'marked')], null),
      false,
      'a key let through clears marks',
    );
    assert.equal(marksBehind([held('agents', 'ops', 'old', null, 'new')], null), true);
    assert.equal(marksBehind(marked(null).slice(1), plan()), true, 'one of the held keys is not listed');
  });

  it('keeps a key its budget lets through listed, with no reason, until its marked runs are cleared', () => {
    const { rows } = nextHeldKeys([held('agents', 'ops', 'old', 'old')], null);
    assert.deepEqual(rows, [held('agents', 'ops', null, null, 'marked')]);
    assert.deepEqual(advancePass(rows[0]!, [3, 9], 2), { ...rows[0]!, cursor: 9 }, 'a full batch: more may follow');
    assert.equal(advancePass(rows[0]!, [12], 2), null, 'the last batch: the key is no longer listed');
  });

  it("goes from a changed key's unmarked runs to its marked ones, then rests; a new key marks its unmarked runs only", () => {
    const row = held('hooks', 'mail', 'spent', 'spent', 'unmarked');
    const marked = advancePass(row, [], 5);
    assert.deepEqual(marked, { ...row, phase: 'marked', cursor: 0 });
    assert.deepEqual(advancePass(marked!, [1, 2], 5), { ...row, phase: null, cursor: 0 });
    assert.deepEqual(advancePass({ ...row, phase: 'new' }, [7], 5), { ...row, phase: null, cursor: 0 });
  });

  it("runs the passes a batch at a time within the claim's budget, leaving the rest for the next claim", () => {
    const rows = [
      held('agents', 'a', 'r', null, 'new'),
      held('agents', 'b', null, null, 'marked'),
      held('hooks', 'c', 'r', null, 'unmarked'),
    ];
    /** Runs queued per key, as the store would find them. */
    const runs: Record<string, number[]> = { a: [1, 2, 3], b: [4, 5, 6, 7, 8], c: [9] };
    const passes = runPasses({ rows, changed: false }, 6);
    const asked: string[] = [];
    let step = passes.next();
    while (step.done !== true) {
      const { row, limit } = step.value;
      asked.push(`${row.key}:${row.phase}:${limit}`);
      step = passes.next(runs[row.key]!.filter((seq) => seq > row.cursor).slice(0, limit));
    }
    assert.deepEqual(asked, ['a:new:6', 'b:marked:3'], "a's 3 runs, then 3 of b's; c waits");
    assert.deepEqual(
      step.value.rows.map((k) => [k.key, k.phase, k.cursor]),
      [
        ['a', null, 0],
        ['b', 'marked', 6],
        ['c', 'unmarked', 0],
      ],
    );
    assert.equal(step.value.changed, true);
    assert.equal(step.value.left, 0);
  });

  it('reopens a listed key the plan lets new runs or restarts through, and every key without budgets', () => {
    const p = plan();
    const rows = [
      held('agents', 'main', 'old'),
      held('hooks', 'mail', 'old', 'old'),
      held('hooks', 'gh', 'old', 'old'),
      held('agents', 'ops', null),
    ];
    assert.deepEqual(reopenedKeys(rows, p), { agents: ['ops'], hooks: ['gh'] });
    assert.deepEqual(
      reopenedKeys([held('hooks', 'mail', 'old', null)], p),
      { agents: [], hooks: [] },
      'still held for new starts; restarts were never marked',
    );
    const q = createBudgetPlan(
      { agents: { main: { runsPerHour: 1 } }, hooks: {} },
      { agents: new Map([['main', usage({ started: 1 })]]), hooks: new Map() },
    );
    assert.deepEqual(
      reopenedKeys([held('agents', 'main', 'tokens', 'tokens')], q),
      { agents: ['main'], hooks: [] },
      'restarts pass again',
    );
    assert.deepEqual(reopenedKeys(rows, null), { agents: ['main', 'ops'], hooks: ['mail', 'gh'] });
  });

  it('merges candidate lists in seq order, each run once, up to the limit', () => {
    const r = (id: string, seq: number) => ({ id, seq });
    assert.deepEqual(
      mergeCandidates([[r('a', 1), r('c', 5)], [r('b', 3), r('c', 5)], [r('d', 2)]], 3).map((x) => x.id),
      ['a', 'd', 'b'],
    );
    const s = (id: string, seq: string) => ({ id, seq });
    assert.deepEqual(
      mergeCandidates([[s('a', '10')], [s('b', '9')]], 5).map((x) => x.id),
      ['b', 'a'],
      "PostgreSQL's bigint seqs compare as numbers",
    );
  });
});
