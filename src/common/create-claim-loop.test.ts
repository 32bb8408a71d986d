import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createManualClock } from '../../test/helpers/manual-clock.js';
import { ClaimLostError, createClaimLoop, type ClaimLoopOptions } from './create-claim-loop.js';
import { createLog } from './log.js';

interface Item {
  id: string;
}

/** A queue the loop claims from, with items the test finishes by hand. */
function harness(overrides: Partial<ClaimLoopOptions<Item>> = {}) {
  const clock = createManualClock();
  const queue: Item[] = [];
  const running = new Map<string, { finish: () => void; finishing: () => void; signal: AbortSignal }>();
  const claims: number[] = [];
  const renewed: string[][] = [];
  let held = (ids: string[]): string[] => ids;
  const loop = createClaimLoop<Item>({
    name: 'items',
    claim: async (limit) => {
      claims.push(limit);
      return queue.splice(0, limit);
    },
    execute: (item, signal, finishing) =>
      new Promise<void>((resolve) => {
        running.set(item.id, { finish: resolve, finishing, signal });
        if (signal.aborted) resolve();
        signal.addEventListener('abort', () => resolve(), { once: true });
      }).finally(() => running.delete(item.id)),
    renew: async (items) => {
      renewed.push(items.map((i) => i.id));
      return held(items.map((i) => i.id));
    },
    concurrency: 2,
    pollMs: 1000,
    renewEveryMs: 100,
    stopGraceMs: 5000,
    clock,
    log: createLog({ level: 'silent' }),
    ...overrides,
  });
  return {
    loop,
    clock,
    queue,
    running,
    claims,
    renewed,
    setHeld: (f: typeof held) => {
      held = f;
    },
  };
}

const settle = async (): Promise<void> => {
  for (let i = 0; i < 10; i++) await new Promise<void>((r) => setImmediate(r));
};

describe('createClaimLoop', () => {
  it('claims nothing while held, lets the items in flight go on, and claims again once not held', async () => {
    let drained = false;
    const h = harness({ held: () => drained });
    h.queue.push({ id: 'a' });
    h.loop.start();
    await settle();
    assert.deepEqual([...h.running.keys()], ['a']);
    const claimsBefore = h.claims.length;
    drained = true;
    h.queue.push({ id: 'b' }, { id: 'c' });
    h.loop.notify();
    await h.clock.advance(1000);
    await settle();
    assert.deepEqual([...h.running.keys()], ['a'], 'nothing new claimed, a still runs');
    assert.equal(h.claims.length, claimsBefore, 'not even asked');
    assert.equal(h.loop.isAlive(), true, 'a held loop is not a stalled one');
    h.running.get('a')!.finish();
    drained = false;
    h.loop.notify();
    await settle();
    assert.deepEqual([...h.running.keys()].sort(), ['b', 'c']);
    for (const r of [...h.running.values()]) r.finish();
    await h.loop.stop();
  });

  it('claims at most its concurrency, and claims again as items finish', async () => {
    const h = harness();
    h.queue.push({ id: 'a' }, { id: 'b' }, { id: 'c' });
    h.loop.start();
    await settle();
    assert.deepEqual([...h.running.keys()], ['a', 'b']);
    assert.equal(h.loop.active(), 2);
    h.running.get('a')!.finish();
    await settle();
    assert.deepEqual([...h.running.keys()].sort(), ['b', 'c']);
    h.running.get('b')!.finish();
    h.running.get('c')!.finish();
    await h.loop.stop();
  });

  it("gives an item's place to the next claim once it is finishing, in the same turn", async () => {
    const h = harness();
    h.queue.push({ id: 'a' }, { id: 'b' }, { id: 'c' }, { id: 'd' });
    h.loop.start();
    await settle();
    h.claims.length = 0;
    h.running.get('a')!.finishing();
    // The claim is made before the turn ends, so a store's group commit takes it with a's last write.
    assert.deepEqual(h.claims, [1]);
    await settle();
    assert.deepEqual([...h.running.keys()], ['a', 'b', 'c'], 'a is still finishing, its place taken by c');
    assert.equal(h.loop.active(), 3);
    h.running.get('a')!.finishing();
    h.running.get('a')!.finish();
    await settle();
    assert.deepEqual([...h.running.keys()], ['b', 'c'], 'a ending frees no second place');
    for (const id of ['b', 'c']) h.running.get(id)!.finish();
    await h.loop.stop();
  });

  it('keeps renewing the lease of an item that is finishing, whose outcome may still be retried', async () => {
    const h = harness();
    h.queue.push({ id: 'a' }, { id: 'b' });
    h.loop.start();
    await settle();
    h.running.get('a')!.finishing();
    await settle();
    await h.clock.advance(100);
    assert.deepEqual(h.renewed.at(-1), ['a', 'b']);
    for (const id of ['a', 'b']) h.running.get(id)!.finish();
    await h.loop.stop();
  });

  it('finds unannounced work on its poll, on the injected clock', async () => {
    const h = harness();
    h.loop.start();
    await settle();
    h.queue.push({ id: 'late' });
    await h.clock.advance(999);
    assert.equal(h.running.size, 0, 'not before the poll');
    await h.clock.advance(1);
    assert.deepEqual([...h.running.keys()], ['late']);
    h.running.get('late')!.finish();
    await h.loop.stop();
  });

  it('picks up announced work at once', async () => {
    const h = harness();
    h.loop.start();
    await settle();
    h.queue.push({ id: 'now' });
    h.loop.notify();
    await settle();
    assert.deepEqual([...h.running.keys()], ['now']);
    h.running.get('now')!.finish();
    await h.loop.stop();
  });

  it('renews the leases of items in flight and aborts an item whose claim was lost', async () => {
    const h = harness();
    h.queue.push({ id: 'a' }, { id: 'b' });
    h.loop.start();
    await settle();
    await h.clock.advance(100);
    assert.deepEqual(h.renewed, [['a', 'b']]);
    h.setHeld((ids) => ids.filter((id) => id !== 'b'));
    const b = h.running.get('b')!;
    await h.clock.advance(100);
    assert.ok(b.signal.reason instanceof ClaimLostError);
    assert.deepEqual([...h.running.keys()], ['a']);
    assert.equal(h.running.get('a')!.signal.aborted, false);
    h.running.get('a')!.finish();
    await h.loop.stop();
  });

  it('keeps going when claiming fails', async () => {
    let fail = true;
    const h = harness({
      claim: async () => {
        if (fail) throw new Error('database down');
        return [];
      },
    });
    h.loop.start();
    await settle();
    fail = false;
    await h.clock.advance(1000);
    await h.loop.stop();
    assert.equal(h.loop.active(), 0);
  });

  it('on stop lets items finish within the grace period, then aborts them; claims nothing more', async () => {
    const h = harness();
    h.queue.push({ id: 'slow' });
    h.loop.start();
    await settle();
    const slow = h.running.get('slow')!;
    let stopped = false;
    const stopping = h.loop.stop().then(() => {
      stopped = true;
    });
    h.queue.push({ id: 'never' });
    h.loop.notify();
    await h.clock.advance(4999);
    assert.equal(slow.signal.aborted, false);
    assert.equal(stopped, false);
    await h.clock.advance(1);
    await stopping;
    assert.equal(slow.signal.aborted, true);
    assert.equal(h.queue.length, 1, 'nothing claimed after stop');
  });

  it('on stop waits for a claim still being answered, and for the items it returns to finish', async () => {
    let answer: (items: Item[]) => void = () => undefined;
    const h = harness({ claim: () => new Promise<Item[]>((resolve) => (answer = resolve)) });
    h.loop.start();
    await settle();
    let stopped = false;
    const stopping = h.loop.stop().then(() => {
      stopped = true;
    });
    // The claim was sent before the stop: the store has leased this item to the loop.
    answer([{ id: 'claimed-late' }]);
    await settle();
    const late = h.running.get('claimed-late');
    assert.ok(late !== undefined, 'the item claimed is worked on');
    assert.equal(stopped, false, 'stop waits for it');
    late.finish();
    await stopping;
    assert.equal(late.signal.aborted, false);
  });

  it('aborts an item claimed after the stop grace ended at once', async () => {
    let answer: (items: Item[]) => void = () => undefined;
    const signals: AbortSignal[] = [];
    const h = harness({
      claim: () => new Promise<Item[]>((resolve) => (answer = resolve)),
      execute: async (_item, signal) => {
        signals.push(signal);
      },
    });
    h.loop.start();
    await settle();
    const stopping = h.loop.stop();
    await h.clock.advance(5000);
    answer([{ id: 'too-late' }]);
    await stopping;
    assert.equal(signals.length, 1);
    assert.equal(signals[0]!.aborted, true, 'its signal was aborted before it started');
  });
});
