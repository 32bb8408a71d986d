import { it, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { createStoreFixture, describeEachDriver, type StoreFixture } from '../../../test/helpers/store-fixture.js';
import { newRun } from '../../../test/helpers/store-records.js';
import { MAX_COALESCED_CHARS } from '../coalesce-separator.js';
import type { Store } from '../store.js';

describeEachDriver('store contract: coalesced runs', (driver) => {
  let f: StoreFixture;
  let store: Store;
  const burst = (message: string, key = 'gh:pr-7', createdAt = f.clock.now()) =>
    newRun('hook:pr-7', { message, createdAt, coalesce: { key, windowMs: 60_000 } });
  const record = (run: ReturnType<typeof burst>) => store.recordActions({ events: [], runs: [run], idempotency: null });
  beforeEach(async () => {
    f = await createStoreFixture(driver);
    store = f.store;
  });
  afterEach(() => f.dispose());

  it('adds a burst about one key to the queued run, in order', async () => {
    const first = burst('opened');
    assert.deepEqual((await record(first)).coalesced, {});
    const second = burst('commented');
    assert.deepEqual((await record(second)).coalesced, { [second.id]: first.id });
    const third = burst('approved');
    assert.deepEqual((await record(third)).coalesced, { [third.id]: first.id });
    const runs = await store.listRuns();
    assert.equal(runs.length, 1);
    assert.match(runs[0]!.message, /^opened\n[\s\S]*commented[\s\S]*approved$/);
  });

  it('gives a burst recorded all at once one run with every message (concurrent requests wait for each other)', async () => {
    const runs = Array.from({ length: 20 }, (_, i) => burst(`event ${i}`));
    const results = await Promise.all(runs.map(record));
    const all = await store.listRuns();
    assert.equal(all.length, 1, `one run, not ${all.length}`);
    for (let i = 0; i < runs.length; i++) {
      assert.ok(all[0]!.message.includes(`event ${i}`), `event ${i} is in the run`);
      const joined = results[i]!.coalesced[runs[i]!.id];
      assert.equal(joined ?? runs[i]!.id, all[0]!.id);
    }
  });

  it('gives the items of one request about one key one run, in order', async () => {
    const [a, b, c] = [burst('first'), burst('second'), burst('third')];
    const group = (run: ReturnType<typeof burst>) => ({ events: [], runs: [run], idempotency: null });
    const result = await store.recordActions({ ...group(a), items: [group(b), group(c)] });
    assert.deepEqual(result.coalesced, { [b.id]: a.id, [c.id]: a.id });
    const runs = await store.listRuns();
    assert.equal(runs.length, 1);
    assert.match(runs[0]!.message, /^first\n[\s\S]*second[\s\S]*third$/);
  });

  it("starts a run of its own for a message that would take the run past MAX_COALESCED_CHARS, which the key's later messages join", async () => {
    const big = 'x'.repeat(100 * 1024);
    const runs = [burst(`a${big}`), burst(`b${big}`), burst(`c${big}`), burst('d')];
    const joined = [];
    for (const run of runs) joined.push((await record(run)).coalesced[run.id]);
    // 100 KiB + 100 KiB fit in 256 KiB; a third does not: it queues a run, which the fourth joins.
    assert.deepEqual(joined, [undefined, runs[0]!.id, undefined, runs[2]!.id]);
    const all = (await store.listRuns()).sort((x, y) => (x.id < y.id ? -1 : 1));
    assert.equal(all.length, 2);
    assert.ok(all.every((r) => r.message.length <= MAX_COALESCED_CHARS));
    assert.match(all[0]!.message, /^ax+\n[\s\S]*\nbx+$/);
    assert.match(all[1]!.message, /^cx+\n[\s\S]*\nd$/);
  });

  it("bounds the run of one request's items about one key the same way", async () => {
    const big = 'y'.repeat(100 * 1024);
    const [a, b, c, d] = [burst(`a${big}`), burst(`b${big}`), burst(`c${big}`), burst('d')];
    const group = (run: ReturnType<typeof burst>) => ({ events: [], runs: [run], idempotency: null });
    const result = await store.recordActions({ ...group(a), items: [group(b), group(c), group(d)] });
    assert.deepEqual(result.coalesced, { [b.id]: a.id, [d.id]: c.id });
    const all = (await store.listRuns()).sort((x, y) => (x.id < y.id ? -1 : 1));
    assert.deepEqual(
      all.map((r) => r.id),
      [a.id, c.id],
    );
    assert.match(all[0]!.message, /^ay+\n[\s\S]*\nby+$/);
    assert.match(all[1]!.message, /^cy+\n[\s\S]*\nd$/);
  });

  it('keeps the answer a request got once its run joined a queued run, for a repeat of it', async () => {
    const first = burst('opened');
    await record(first);
    const second = burst('commented');
    const key = (k: string) => ({
      hook: 'pr',
      key: k,
      status: 202,
      body: `{"runId":"${second.id}"}`,
      createdAt: f.clock.now(),
      expiresAt: f.clock.now() + 60_000,
      answerJoined: (c: Readonly<Record<string, string>>) =>
        `{"runId":"${c[second.id] ?? second.id}","coalesced":true}`,
    });
    const result = await store.recordActions({ events: [], runs: [second], idempotency: key('k') });
    assert.deepEqual(result.coalesced, { [second.id]: first.id });
    assert.equal((await store.findIdempotencyKey('pr', 'k'))?.body, `{"runId":"${first.id}","coalesced":true}`);
    const alone = burst('other key', 'gh:pr-8');
    await store.recordActions({ events: [], runs: [alone], idempotency: { ...key('k2'), body: '{"kept":true}' } });
    assert.equal(
      (await store.findIdempotencyKey('pr', 'k2'))?.body,
      '{"kept":true}',
      'a run that joined nothing keeps its answer',
    );
  });

  it('keeps other keys apart', async () => {
    await record(burst('a'));
    assert.deepEqual((await record(burst('b', 'gh:pr-8'))).coalesced, {});
    assert.equal((await store.listRuns()).length, 2);
  });

  it('holds the run while its window collects the burst, then lets it be claimed with every message', async () => {
    await record(burst('opened'));
    await record(burst('commented'));
    assert.deepEqual(await store.claimRuns({ owner: 'w', limit: 5, leaseMs: 1000 }), [], 'still collecting');
    await f.clock.advance(60_000);
    const [claimed] = await store.claimRuns({ owner: 'w', limit: 5, leaseMs: 1000 });
    assert.match(claimed!.message, /opened[\s\S]*commented/);
    const after = burst('merged');
    assert.deepEqual((await record(after)).coalesced, {}, 'a run past its window takes no more messages');
    assert.equal((await store.listRuns()).length, 2);
  });

  it('claims a run queued behind many runs in their windows at once, and each of those once its own window ends, in order', async () => {
    const small = await createStoreFixture(driver, { claimScan: 2 });
    try {
      const s = small.store;
      const waiting: string[] = [];
      for (let i = 0; i < 5; i++) {
        const run = newRun(`hook:w${i}`, {
          message: `w${i}`,
          createdAt: small.clock.now(),
          coalesce: { key: `k${i}`, windowMs: 60_000 },
        });
        await s.enqueueRun(run);
        waiting.push(run.id);
        await small.clock.advance(1000);
      }
      const plain = newRun('hook:plain', { createdAt: small.clock.now() });
      await s.enqueueRun(plain);
      const claim = async () => (await s.claimRuns({ owner: 'w', limit: 10, leaseMs: 600_000 })).map((r) => r.id);
      assert.deepEqual(await claim(), [plain.id], 'five runs in their windows before it, more than a scan of 2');
      await small.clock.advance(55_000 - 1);
      assert.deepEqual(await claim(), [], 'the first window ends in a millisecond');
      await small.clock.advance(1);
      assert.deepEqual(await claim(), [waiting[0]]);
      const late = newRun('hook:w9', {
        message: 'late',
        createdAt: small.clock.now(),
        coalesce: { key: 'k1', windowMs: 60_000 },
      });
      assert.deepEqual(
        (await s.recordActions({ events: [], runs: [late], idempotency: null })).coalesced,
        { [late.id]: waiting[1] },
        'k1 is still collecting',
      );
      const queued = await s.listRuns({ state: 'queued', limit: 10 });
      assert.match(queued.find((r) => r.id === waiting[1])?.message ?? '', /w1[\s\S]*late/);
      assert.equal(queued.length, 4);
      await small.clock.advance(10_000);
      const rest = await claim();
      assert.deepEqual(rest, waiting.slice(1), 'every window has ended: oldest first');
    } finally {
      await small.dispose();
    }
  });

  it('never holds a run that does not coalesce', async () => {
    await store.enqueueRun(newRun('plain'));
    assert.equal((await store.claimRuns({ owner: 'w', limit: 5, leaseMs: 1000 })).length, 1);
  });
});
