import { it, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { createStoreFixture, describeEachDriver, type StoreFixture } from '../../../test/helpers/store-fixture.js';
import { completion, enqueueAlone, MAIN, newRun, source, turn } from '../../../test/helpers/store-records.js';
import type { RunBudgets } from '../run-budgets.js';
import type { Store } from '../store.js';
import type { ClaimedRun, WorkSignal } from '../types.js';

const HOUR = 3_600_000;

describeEachDriver('store contract: run budgets', (driver) => {
  let f: StoreFixture;
  let store: Store;
  const enqueue = (o: { agentId?: string; hook?: string } = {}): Promise<string> =>
    enqueueAlone(store, f.clock.now(), o);
  const claim = (budgets?: RunBudgets, limit = 10, on: Store = store): Promise<ClaimedRun[]> =>
    on.claimRuns({ owner: 'w', limit, leaseMs: 10 * HOUR, ...(budgets === undefined ? {} : { budgets }) });
  const finish = async (r: ClaimedRun, tokens: number | null = null): Promise<void> => {
    assert.equal(await store.completeRun(completion(r, { finishedAt: f.clock.now(), tokens, delivery: null })), true);
  };
  const queued = async () => store.listRuns({ state: 'queued', limit: 100 });

  beforeEach(async () => {
    f = await createStoreFixture(driver);
    store = f.store;
  });
  afterEach(() => f.dispose());

  it('starts at most runsPerHour runs of an agent in a rolling hour, holds the rest with the reason, then releases them', async () => {
    const budgets: RunBudgets = { agents: { main: { runsPerHour: 2 } }, hooks: {} };
    for (let i = 0; i < 5; i++) await enqueue();
    await enqueue({ agentId: 'ops' });
    const first = await claim(budgets);
    assert.deepEqual(
      first.map((r) => r.agentId).sort(),
      ['main', 'main', 'ops'],
      'two of main, and the unbudgeted agent',
    );
    const held = await queued();
    assert.equal(held.length, 3);
    for (const r of held)
      assert.match(r.heldReason ?? '', /agent "main": 2 runs started in the last hour \(runsPerHour 2\)/);
    assert.equal((await store.readQueueStats()).heldRuns, 3);
    for (const r of first) await finish(r);
    await f.clock.advance(HOUR - 1000);
    assert.deepEqual(await claim(budgets), [], 'finished runs still count until an hour after they started');
    await f.clock.advance(1000);
    const second = await claim(budgets);
    assert.equal(second.length, 2, 'the window rolled: two more');
    assert.equal(
      second.every((r) => r.heldReason === null),
      true,
      'a claimed run is no longer held',
    );
    assert.equal((await queued()).length, 1);
  });

  it('counts a start only once: a run handed back and claimed again does not spend the budget twice', async () => {
    const budgets: RunBudgets = { agents: { main: { runsPerHour: 2 } }, hooks: {} };
    await enqueue();
    await enqueue();
    const [a] = await claim(budgets, 1);
    assert.equal(await store.releaseRun(a!), true);
    assert.equal((await claim(budgets)).length, 2);
  });

  it("claims again at once a run handed back or requeued after the hour's starts were used up, while a new run stays held", async () => {
    const budgets: RunBudgets = { agents: { main: { runsPerHour: 2 } }, hooks: {} };
    for (let i = 0; i < 3; i++) await enqueue();
    const [a, b] = await store.claimRuns({ owner: 'w', limit: 10, leaseMs: 1000, budgets });
    assert.equal(await store.releaseRun(a!), true, 'handed back at shutdown');
    await f.clock.advance(2000);
    const recovered = await store.recoverExpiredRuns({ owner: 'w2', maxAttempts: 3, leaseMs: 1000 });
    assert.deepEqual(recovered.requeued, [b!.id], 'requeued after its process died');
    const again = await claim(budgets);
    assert.deepEqual(again.map((r) => r.id).sort(), [a!.id, b!.id].sort(), 'their starts were counted once already');
    const [held] = await queued();
    assert.match(held!.heldReason ?? '', /agent "main": 2 runs started in the last hour \(runsPerHour 2\)/);
  });

  it("holds a run started before while its budget's tokens are spent or its mapping runs maxConcurrentRuns at once", async () => {
    const budgets: RunBudgets = {
      agents: {},
      hooks: { mail: { tokensPerDay: 1000 }, github: { maxConcurrentRuns: 1 } },
    };
    await enqueue({ hook: 'mail' });
    await enqueue({ hook: 'mail' });
    const [spent, handed] = await claim(budgets);
    await finish(spent!, 1200);
    assert.equal(await store.releaseRun(handed!), true);
    await enqueue({ hook: 'github' });
    await enqueue({ hook: 'github' });
    const [g1] = await claim(budgets, 1);
    const [g2] = await claim(budgets, 1);
    assert.equal(g1!.source.hook, 'github');
    assert.equal(g2, undefined);
    assert.deepEqual(await claim(budgets), [], 'neither the handed-back mail run nor the second github run');
    const reasons = (await queued()).map((r) => r.heldReason ?? '').sort();
    assert.match(reasons[0]!, /mapping "github": 1 run running/);
    assert.match(reasons[1]!, /mapping "mail": 1,200 tokens spent/);
  });

  it('shows the reason on a run that goes back to the queue while its key is already held for restarts', async () => {
    const budgets: RunBudgets = { agents: {}, hooks: { mail: { tokensPerDay: 1000 } } };
    for (let i = 0; i < 3; i++) await enqueue({ hook: 'mail' });
    const [spent, handed, crashed] = await claim(budgets);
    await finish(spent!, 1200);
    await enqueue({ hook: 'mail' });
    assert.deepEqual(await claim(budgets), [], 'the new run is held: the key is held from here on');
    assert.equal(await store.releaseRun(handed!), true);
    await f.clock.advance(10 * HOUR + 1);
    assert.deepEqual((await store.recoverExpiredRuns({ owner: 'w2', maxAttempts: 3, leaseMs: HOUR })).requeued, [
      crashed!.id,
    ]);
    const reasons = async () => (await queued()).map((r) => [r.id, r.heldReason ?? '']).sort();
    for (const [id, reason] of await reasons())
      assert.match(reason!, /mapping "mail": 1,200 tokens spent/, `run ${id}, before any claim`);
    assert.deepEqual(await claim(budgets), []);
    assert.equal((await reasons()).length, 3);
    for (const [id, reason] of await reasons())
      assert.match(reason!, /mapping "mail": 1,200 tokens spent/, `run ${id}, after a claim`);
    await f.clock.advance(24 * HOUR);
    assert.equal((await claim(budgets)).length, 3, 'once the tokens are a day old, all three run');
  });

  it("holds runs past a mapping's maxConcurrentRuns while other hooks run, and releases one as one finishes", async () => {
    const budgets: RunBudgets = { agents: {}, hooks: { github: { maxConcurrentRuns: 1 } } };
    for (let i = 0; i < 3; i++) await enqueue({ hook: 'github' });
    await enqueue({ hook: 'stripe' });
    const first = await claim(budgets);
    assert.deepEqual(first.map((r) => r.source.hook).sort(), ['github', 'stripe']);
    assert.deepEqual(await claim(budgets), []);
    const held = await queued();
    assert.equal(held.length, 2);
    for (const r of held) assert.match(r.heldReason ?? '', /mapping "github": 1 run running \(maxConcurrentRuns 1\)/);
    await finish(first.find((r) => r.source.hook === 'github')!);
    const next = await claim(budgets);
    assert.deepEqual(
      next.map((r) => r.source.hook),
      ['github'],
    );
  });

  it('holds an agent once its runs spent tokensPerDay, counting the tokens each run reported, for 24 hours', async () => {
    const budgets: RunBudgets = { agents: {}, hooks: { mail: { tokensPerDay: 1000 } } };
    for (let i = 0; i < 3; i++) await enqueue({ hook: 'mail' });
    const [a] = await claim(budgets, 1);
    await finish(a!, 600);
    assert.equal((await store.getRun(a!.id))!.tokens, 600);
    const [b] = await claim(budgets, 1);
    assert.ok(b, 'under budget: 600 of 1,000');
    await finish(b!, 500);
    assert.deepEqual(await claim(budgets), []);
    const [held] = await queued();
    assert.match(held!.heldReason ?? '', /mapping "mail": 1,100 tokens spent in the last 24 h \(tokensPerDay 1,000\)/);
    await f.clock.advance(24 * HOUR);
    assert.equal((await claim(budgets)).length, 1, 'the spending left the window');
  });

  it('keeps the count a held run was marked with while its key stays held by the same limit; runs queued after say the new count', async () => {
    const budgets: RunBudgets = { agents: {}, hooks: { mail: { tokensPerDay: 1000 } } };
    await enqueue({ hook: 'mail' });
    await enqueue({ hook: 'mail' });
    const [spent, late] = await claim(budgets);
    await finish(spent!, 1200);
    const early = [await enqueue({ hook: 'mail' }), await enqueue({ hook: 'mail' })];
    assert.deepEqual(await claim(budgets), []);
    const reasonOf = async (id: string): Promise<string> => (await store.getRun(id))!.heldReason ?? '';
    for (const id of early)
      assert.match(await reasonOf(id), /mapping "mail": 1,200 tokens spent in the last 24 h \(tokensPerDay 1,000\)/);
    // The run that started before the key was held reports its tokens: the count moves, the limit stays.
    await finish(late!, 300);
    const after = await enqueue({ hook: 'mail' });
    assert.deepEqual(await claim(budgets), []);
    assert.deepEqual(await claim(budgets), []);
    assert.match(await reasonOf(after), /mapping "mail": 1,500 tokens spent in the last 24 h \(tokensPerDay 1,000\)/);
    for (const id of early)
      assert.match(
        await reasonOf(id),
        /mapping "mail": 1,200 tokens spent/,
        'marked runs are not rewritten for a new count',
      );
    // Held by another limit (a reload lowering it): every marked run is rewritten.
    const lowered: RunBudgets = { agents: {}, hooks: { mail: { tokensPerDay: 900 } } };
    for (let i = 0; i < 3; i++) assert.deepEqual(await claim(lowered), []);
    for (const id of [...early, after])
      assert.match(await reasonOf(id), /mapping "mail": 1,500 tokens spent in the last 24 h \(tokensPerDay 900\)/);
    await f.clock.advance(24 * HOUR);
    assert.equal((await claim(lowered)).length, 3, 'once the tokens are a day old, all three run');
  });

  it('claims the oldest claimable run first when the first ready runs hold none and a key let through has a newer one', async () => {
    const budgets: RunBudgets = { agents: {}, hooks: { gh: { maxConcurrentRuns: 1 } } };
    // A line of 40 runs in one session: once its first runs, the rest are ready but not claimable.
    for (let i = 0; i < 40; i++) await store.enqueueRun(newRun('hook:one', { createdAt: f.clock.now() }));
    assert.equal((await claim(budgets, 1)).length, 1);
    // Older than the held run below, but waiting in its coalescing window while that run is marked.
    const older = newRun('hook:older', { createdAt: f.clock.now(), coalesce: { key: 'older', windowMs: 60_000 } });
    await store.recordActions({ events: [], runs: [older], idempotency: null });
    await enqueue({ hook: 'gh' });
    const newer = await enqueue({ hook: 'gh' });
    const [gh] = await claim(budgets, 1);
    assert.equal(gh!.source.hook, 'gh');
    assert.match((await store.getRun(newer))!.heldReason ?? '', /maxConcurrentRuns 1/);
    await finish(gh!);
    await f.clock.advance(60_001);
    assert.deepEqual(
      (await claim(budgets, 1)).map((r) => r.id),
      [older.id],
      'the older run, not the newer one its key lets through',
    );
    assert.deepEqual(
      (await claim(budgets, 1)).map((r) => r.id),
      [newer],
    );
  });

  it("counts the tokens of the agent's heartbeat turns against its tokensPerDay, beside its runs'", async () => {
    const beat = async (tokens: number | null): Promise<void> => {
      const lease = await store.claimHeartbeat({ agentId: 'main', owner: 'w', leaseMs: HOUR });
      const at = f.clock.now();
      assert.equal(
        await store.recordHeartbeatTurn({
          claimId: lease!.claimId,
          sessionKey: MAIN,
          agentId: 'main',
          consumedEventIds: [],
          transcript: turn(MAIN, `t${at}`, at),
          delivery: null,
          at,
          tokens,
        }),
        true,
      );
      await store.releaseHeartbeat(lease!);
    };
    /** What the agent spent in the last 24 h, as claims count it. */
    const spent = async (agent: string): Promise<number> =>
      (await store.readBudgetUsage({ agents: { [agent]: { tokensPerDay: 1 } }, hooks: {} })).agents[agent]!.tokens;
    await beat(null);
    assert.equal(await spent('main'), 0, 'a turn that reported no usage counts nothing');
    await beat(700);
    await f.clock.advance(1000);
    await beat(500);
    assert.equal(await spent('main'), 1200);
    assert.equal(await spent('ops'), 0, 'per agent');
    const budgets: RunBudgets = { agents: { main: { tokensPerDay: 1000 } }, hooks: {} };
    const held = await enqueue();
    assert.deepEqual(await claim(budgets), []);
    assert.match(
      (await store.getRun(held))!.heldReason ?? '',
      /agent "main": 1,200 tokens spent in the last 24 h \(tokensPerDay 1,000\)/,
    );
    await f.clock.advance(24 * HOUR - 999);
    assert.equal(await spent('main'), 500, 'the first turn left the window');
    assert.deepEqual(
      (await claim(budgets)).map((r) => r.id),
      [held],
      'under the budget again',
    );
    assert.equal(await spent('main'), 500);
  });

  it('holds a run when either its agent or its mapping is out of budget', async () => {
    const budgets: RunBudgets = { agents: { main: { runsPerHour: 5 } }, hooks: { github: { runsPerHour: 1 } } };
    await enqueue({ hook: 'github' });
    await enqueue({ hook: 'github' });
    await enqueue({ hook: 'other' });
    const claimed = await claim(budgets);
    assert.deepEqual(claimed.map((r) => r.source.hook).sort(), ['github', 'other']);
  });

  it("keeps a run held by its mapping when its agent's budget lets runs through again, then claims it when the mapping's does", async () => {
    const budgets: RunBudgets = { agents: { main: { runsPerHour: 1 } }, hooks: { gh: { runsPerHour: 1 } } };
    for (let i = 0; i < 2; i++) await enqueue({ hook: 'gh' });
    await enqueue({ hook: 'mail' });
    const [first] = await claim(budgets, 1);
    assert.equal(first!.source.hook, 'gh');
    assert.deepEqual(await claim(budgets), []);
    for (const r of await queued()) assert.match(r.heldReason ?? '', /agent "main"/, "the agent's reason comes first");
    // The agent's budget is raised (a reload); the mapping's is still spent.
    const eased: RunBudgets = { agents: { main: { runsPerHour: 5 } }, hooks: { gh: { runsPerHour: 1 } } };
    const next = await claim(eased);
    assert.deepEqual(
      next.map((r) => r.source.hook),
      ['mail'],
      'the mail run, which only its agent held',
    );
    const [gh] = await queued();
    assert.match(gh!.heldReason ?? '', /mapping "gh": 1 run started in the last hour/, 'now held by its mapping');
    await f.clock.advance(HOUR);
    assert.deepEqual(
      (await claim(eased)).map((r) => r.source.hook),
      ['gh'],
    );
    assert.deepEqual(await queued(), []);
  });

  it('leaves a large held backlog marked, and claims it in order as the budget allows', async () => {
    const budgets: RunBudgets = { agents: { main: { runsPerHour: 2 } }, hooks: {} };
    const ids: string[] = [];
    for (let i = 0; i < 300; i++) ids.push(await enqueue());
    assert.deepEqual(
      (await claim(budgets)).map((r) => r.id),
      ids.slice(0, 2),
    );
    const held = await store.listRuns({ state: 'queued', limit: 1000 });
    assert.equal(held.length, 298);
    assert.equal(
      held.every((r) => /runsPerHour 2/.test(r.heldReason ?? '')),
      true,
      'every queued run says why',
    );
    assert.equal((await store.readQueueStats()).heldRuns, 298);
    for (let hour = 1; hour <= 3; hour++) {
      await f.clock.advance(HOUR);
      assert.deepEqual(
        (await claim(budgets)).map((r) => r.id),
        ids.slice(2 * hour, 2 * hour + 2),
        `hour ${hour}`,
      );
    }
    assert.equal((await store.readQueueStats()).heldRuns, 292);
    assert.deepEqual((await claim()).length, 10, 'without budgets every run is claimable again');
    assert.equal((await store.readQueueStats()).heldRuns, 0);
  });

  it('marks a held backlog a batch a claim, and claims its runs in order whatever is marked yet', async () => {
    const small = await createStoreFixture(driver, { heldMarkBatch: 4 });
    try {
      const s = small.store;
      const budgets: RunBudgets = { agents: { main: { runsPerHour: 1 } }, hooks: {} };
      const ids: string[] = [];
      for (let i = 0; i < 20; i++) {
        const run = newRun(`hook:b${i}`, { createdAt: small.clock.now() });
        await s.enqueueRun(run);
        ids.push(run.id);
      }
      const claimOn = async (b?: RunBudgets) =>
        (
          await s.claimRuns({ owner: 'w', limit: 3, leaseMs: 10 * HOUR, ...(b === undefined ? {} : { budgets: b }) })
        ).map((r) => r.id);
      assert.deepEqual(await claimOn(budgets), [ids[0]]);
      assert.equal((await s.readQueueStats()).heldRuns, 4, 'one batch of the 19 held runs marked');
      assert.deepEqual(await claimOn(budgets), []);
      assert.equal((await s.readQueueStats()).heldRuns, 8);
      await small.clock.advance(HOUR);
      assert.deepEqual(await claimOn(budgets), [ids[1]], 'the oldest, marked, run first');
      for (let i = 0; i < 5; i++) await claimOn(budgets);
      assert.equal((await s.readQueueStats()).heldRuns, 18, 'every held run marked, over several claims');
      // The budget goes (a reload): every run is claimable at once, while the marks are cleared a batch a claim.
      assert.deepEqual(await claimOn(), ids.slice(2, 5));
      assert.equal((await s.readQueueStats()).heldRuns, 11, 'three claimed, four marks cleared');
      assert.deepEqual(await claimOn(), ids.slice(5, 8));
      for (let i = 0; i < 5; i++) await claimOn();
      assert.equal((await s.readQueueStats()).heldRuns, 0);
      assert.deepEqual(await s.listRuns({ state: 'queued', limit: 100 }), []);
    } finally {
      await small.dispose();
    }
  });

  it('while a held backlog in many sessions is being marked, claims announce more work and reach the run behind it once marked', async () => {
    const small = await createStoreFixture(driver, { heldMarkBatch: 4, claimScan: 2 });
    const signals: WorkSignal[] = [];
    const off = small.store.subscribe((s) => signals.push(s));
    try {
      const s = small.store;
      const budgets: RunBudgets = { agents: {}, hooks: { flood: { runsPerHour: 1 } } };
      for (let i = 0; i < 16; i++)
        await s.enqueueRun(
          newRun(`hook:f${i}`, { source: { ...source, hook: 'flood' }, createdAt: small.clock.now() }),
        );
      const other = newRun('hook:other', { source: { ...source, hook: 'mail' }, createdAt: small.clock.now() });
      await s.enqueueRun(other);
      const claimOn = async () =>
        (await s.claimRuns({ owner: 'w', limit: 2, leaseMs: 10 * HOUR, budgets })).map((r) => r.source.hook);
      /** Whether a claim announced queued runs (notifications from a database arrive asynchronously). */
      const announced = async (): Promise<boolean> => {
        for (let i = 0; i < 50 && !signals.some((x) => x.kind === 'runs'); i++) await sleep(10);
        const yes = signals.some((x) => x.kind === 'runs');
        signals.length = 0;
        return yes;
      };
      assert.deepEqual(await claimOn(), ['flood'], 'the first flood run starts and holds the rest');
      assert.equal(await announced(), true, 'the other 15 are not all marked yet: more work is announced');
      const claimed: string[] = [];
      let claims = 1;
      while (!claimed.includes('mail') && claims < 10) {
        claimed.push(...(await claimOn()));
        claims++;
      }
      assert.deepEqual(claimed, ['mail'], 'only the run behind the held backlog, once its marks caught up');
      assert.ok(
        claims <= 6,
        `15 held runs marked 4 a claim reach it by the fifth claim after the first (took ${claims - 1})`,
      );
      assert.equal((await s.readQueueStats()).heldRuns, 15);
      signals.length = 0;
      assert.deepEqual(await claimOn(), []);
      await sleep(driver === 'postgres' ? 100 : 0);
      assert.deepEqual(
        signals.filter((x) => x.kind === 'runs'),
        [],
        'every held run marked: nothing more to announce',
      );
    } finally {
      off();
      await small.dispose();
    }
  });

  it('forgets held reasons when the budgets are gone, and claims everything', async () => {
    const budgets: RunBudgets = { agents: { main: { runsPerHour: 1 } }, hooks: {} };
    for (let i = 0; i < 3; i++) await enqueue();
    assert.equal((await claim(budgets)).length, 1);
    assert.equal((await queued()).filter((r) => r.heldReason !== null).length, 2);
    assert.equal((await claim()).length, 2);
  });

  it('marks runs queued after a claim held, at the next claim', async () => {
    const budgets: RunBudgets = { agents: { main: { runsPerHour: 1 } }, hooks: {} };
    await enqueue();
    assert.equal((await claim(budgets)).length, 1);
    const late = await enqueue();
    assert.equal((await store.getRun(late))!.heldReason, null, 'no claim has looked at it yet');
    assert.deepEqual(await claim(budgets), []);
    assert.match((await store.getRun(late))!.heldReason ?? '', /runsPerHour 1/);
  });

  it('never lets claimers racing each other overrun a budget', async () => {
    const budgets: RunBudgets = { agents: { main: { runsPerHour: 3 } }, hooks: {} };
    for (let i = 0; i < 8; i++) await enqueue();
    // PostgreSQL: two stores, as two replicas; SQLite: one store, claims issued together.
    const other = driver === 'postgres' ? await f.open('serve') : store;
    const batches = await Promise.all([
      claim(budgets, 2),
      claim(budgets, 2, other),
      claim(budgets, 2),
      claim(budgets, 2, other),
    ]);
    assert.equal(batches.flat().length, 3);
    assert.equal(new Set(batches.flat().map((r) => r.id)).size, 3);
  });
});
