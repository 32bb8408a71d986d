import { it, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { createStoreFixture, describeEachDriver, type StoreFixture } from '../../../test/helpers/store-fixture.js';
import { completion, newEvent, newLogEvent, newRun } from '../../../test/helpers/store-records.js';
import type { Store } from '../store.js';
import type { LogEventRecord } from '../event-log-types.js';
import type { PruneCutoffs } from '../maintenance-types.js';

const NONE: PruneCutoffs = { events: 0, runs: 0, deliveries: 0, transcript: 0, requests: 0, eventLog: 0 };

describeEachDriver('store contract: event log', (driver) => {
  let f: StoreFixture;
  let store: Store;
  beforeEach(async () => {
    f = await createStoreFixture(driver);
    store = f.store;
  });
  afterEach(() => f.dispose());

  const read = async (name: string, o: { after?: number; agentId?: string } = {}): Promise<LogEventRecord[]> => {
    const { head } = await store.readLogPosition();
    return store.readLogEvents({ name, after: o.after ?? 0, through: head, limit: 100, ...o });
  };

  it('writes the occurrence a wake publishes with the wake, and none for a wake that publishes nothing', async () => {
    const published = newLogEvent('hook.wake', { data: { text: 'ping', nested: { a: [1, 2] } }, requestId: 'r1' });
    await store.addSystemEvent(newEvent('ping', { published }));
    await store.addSystemEvent(newEvent('quiet'));
    const [e, ...rest] = await read('hook.wake');
    assert.equal(rest.length, 0);
    assert.equal(e!.id, published.id);
    assert.equal(e!.requestId, 'r1');
    assert.equal(e!.agentId, 'main');
    assert.equal(e!.untrusted, true);
    assert.deepEqual(JSON.parse(e!.dataJson), { text: 'ping', nested: { a: [1, 2] } });
    assert.ok(e!.seq > 0);
  });

  it("writes a run's occurrence with the run, and one that joined a queued run names that run", async () => {
    const first = newRun('hook:c', { coalesce: { key: 'k', windowMs: 60_000 }, createdAt: f.clock.now() });
    first.published = newLogEvent('hook.github', { data: { runId: first.id } });
    const second = newRun('hook:c', { coalesce: { key: 'k', windowMs: 60_000 }, createdAt: f.clock.now() });
    second.published = newLogEvent('hook.github', { data: { runId: second.id } });
    await store.recordActions({ events: [], runs: [first], idempotency: null });
    const { coalesced } = await store.recordActions({ events: [], runs: [second], idempotency: null });
    assert.equal(coalesced[second.id], first.id);
    const events = await read('hook.github');
    assert.deepEqual(
      events.map((e) => JSON.parse(e.dataJson) as unknown),
      [{ runId: first.id }, { runId: first.id, coalesced: true }],
    );
  });

  it('writes occurrences recorded on their own, item by item, skipping items seen before', async () => {
    const key = { hook: 'feed', status: 200, body: '{}', createdAt: 1, expiresAt: f.clock.now() + 60_000 };
    const a = newLogEvent('hook.feed');
    const b = newLogEvent('hook.feed');
    await store.recordActions({
      events: [],
      runs: [],
      idempotency: null,
      items: [{ events: [], runs: [], published: [a], idempotency: { ...key, key: 'item:1' } }],
    });
    const { skippedItems } = await store.recordActions({
      events: [],
      runs: [],
      idempotency: null,
      items: [
        { events: [], runs: [], published: [newLogEvent('hook.feed')], idempotency: { ...key, key: 'item:1' } },
        { events: [], runs: [], published: [b], idempotency: { ...key, key: 'item:2' } },
      ],
    });
    assert.deepEqual(skippedItems, [0]);
    assert.deepEqual(
      (await read('hook.feed')).map((e) => e.id),
      [a.id, b.id],
    );
  });

  it("writes run.finished with the run's end, and nothing for a stale claim", async () => {
    await store.enqueueRun(newRun('hook:r'));
    const [claim] = await store.claimRuns({ owner: 'w', limit: 1, leaseMs: 60_000 });
    const finished = newLogEvent('run.finished', { data: { runId: claim!.id, state: 'succeeded' } });
    assert.equal(
      await store.completeRun(completion(claim!, { claimId: 'stale', published: newLogEvent('run.finished') })),
      false,
    );
    assert.equal(await store.completeRun(completion(claim!, { published: finished })), true);
    assert.deepEqual(
      (await read('run.finished')).map((e) => e.id),
      [finished.id],
    );
  });

  it("writes run.finished with a queued run's cancellation", async () => {
    const run = newRun('hook:x');
    await store.enqueueRun(run);
    const published = newLogEvent('run.finished', { data: { runId: run.id, state: 'failed' } });
    assert.equal(
      await store.cancelRun({ runId: run.id, finishedAt: 9, error: 'cancelled', summary: newEvent('s'), published }),
      true,
    );
    assert.deepEqual(
      (await read('run.finished')).map((e) => e.id),
      [published.id],
    );
  });

  it('reads one name after a position, oldest first, by agent when asked, up to the limit', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) {
      const published = newLogEvent(i % 3 === 2 ? 'hook.other' : 'hook.wake', {
        agentId: i % 2 === 0 ? 'main' : 'ops',
      });
      ids.push(published.id);
      await store.addSystemEvent(newEvent(`e${i}`, { published }));
    }
    const all = await read('hook.wake');
    assert.deepEqual(
      all.map((e) => e.id),
      [ids[0], ids[1], ids[3], ids[4]],
    );
    assert.deepEqual(
      (await read('hook.wake', { after: all[1]!.seq })).map((e) => e.id),
      [ids[3], ids[4]],
    );
    assert.deepEqual(
      (await read('hook.wake', { agentId: 'ops' })).map((e) => e.id),
      [ids[1], ids[3]],
    );
    const { head } = await store.readLogPosition();
    assert.equal((await store.readLogEvents({ name: 'hook.wake', after: 0, through: head, limit: 2 })).length, 2);
    assert.equal(
      (await store.readLogEvents({ name: 'hook.wake', after: 0, through: all[0]!.seq, limit: 9 })).length,
      1,
    );
  });

  it('puts the head at the last occurrence written once its write has resolved', async () => {
    assert.deepEqual(await store.readLogPosition(), { head: 0, prunedThrough: 0 });
    const published = newLogEvent('hook.wake');
    await store.addSystemEvent(newEvent('a', { published }));
    const [e] = await read('hook.wake');
    assert.equal((await store.readLogPosition()).head, e!.seq);
  });

  it('announces occurrences after their commit', async () => {
    const seen: string[] = [];
    const off = store.subscribe((s) => seen.push(s.kind));
    await store.addSystemEvent(newEvent('a', { mode: 'next-heartbeat', published: newLogEvent('hook.wake') }));
    for (let i = 0; i < 200 && !seen.includes('published'); i++) await sleep(10);
    off();
    assert.ok(seen.includes('published'), JSON.stringify(seen));
  });

  it('prunes the oldest occurrences past the window and marks how far it pruned, exactly', async () => {
    const written: LogEventRecord[] = [];
    for (const at of [10, 20, 30, 5_000]) {
      await store.addSystemEvent(newEvent('x', { published: newLogEvent('hook.wake', { createdAt: at }) }));
    }
    written.push(...(await read('hook.wake')));
    const cutoffs = { ...NONE, eventLog: 1_000 };
    assert.equal((await store.countPrunable(cutoffs)).eventLog, 3);
    assert.equal((await store.prune(cutoffs, 2)).eventLog, 2);
    assert.equal((await store.readLogPosition()).prunedThrough, written[1]!.seq);
    assert.equal((await store.prune(cutoffs, 10)).eventLog, 1);
    assert.equal((await store.prune(cutoffs, 10)).eventLog, 0);
    const position = await store.readLogPosition();
    assert.equal(position.prunedThrough, written[2]!.seq);
    assert.deepEqual(
      (await read('hook.wake')).map((e) => e.id),
      [written[3]!.id],
    );
  });

  it('never numbers an occurrence again after retention emptied the log', async () => {
    await store.addSystemEvent(newEvent('x', { published: newLogEvent('hook.wake', { createdAt: 10 }) }));
    const [first] = await read('hook.wake');
    await store.prune({ ...NONE, eventLog: 1_000 }, 10);
    assert.deepEqual(await read('hook.wake'), []);
    await store.addSystemEvent(newEvent('y', { published: newLogEvent('hook.wake', { createdAt: 2_000 }) }));
    const [next] = await read('hook.wake', { after: first!.seq });
    assert.ok(next !== undefined && next.seq > first!.seq, 'numbered after every occurrence handed out before');
  });

  it('finds the last occurrence created before a time', async () => {
    for (const at of [10, 20, 30]) {
      await store.addSystemEvent(newEvent('x', { published: newLogEvent('hook.wake', { createdAt: at }) }));
    }
    const all = await read('hook.wake');
    assert.equal(await store.findLogSeqBefore(25, f.clock.now()), all[1]!.seq);
    assert.equal(await store.findLogSeqBefore(5, f.clock.now()), 0);
  });
});
