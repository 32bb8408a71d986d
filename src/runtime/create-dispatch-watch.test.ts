import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createManualClock } from '../../test/helpers/manual-clock.js';
import { createLog } from '../common/log.js';
import type { DispatchHold } from '../store/index.js';
import { createDispatchWatch } from './create-dispatch-watch.js';

const hold = (scope: DispatchHold['scope'], key: string): DispatchHold => ({
  scope,
  key,
  kind: 'pause',
  note: null,
  at: 1,
});

function harness() {
  const clock = createManualClock();
  let holds: DispatchHold[] = [];
  const reads: Array<{ holds: readonly DispatchHold[]; lifted: boolean }> = [];
  const watch = createDispatchWatch({
    store: { listHolds: async () => holds },
    clock,
    log: createLog({ level: 'silent' }),
    pollMs: 2000,
    onRead: (h, lifted) => reads.push({ holds: h, lifted }),
  });
  return {
    clock,
    watch,
    reads,
    set: (next: DispatchHold[]) => {
      holds = next;
    },
  };
}

describe('createDispatchWatch', () => {
  it('reads the holds at start and at every poll, and says when one was lifted', async () => {
    const h = harness();
    h.set([hold('mapping', 'github')]);
    await h.watch.start();
    assert.deepEqual(
      h.watch.holds().map((x) => x.key),
      ['github'],
    );
    h.set([]);
    await h.clock.advance(2000);
    assert.deepEqual(
      h.reads.map((r) => r.lifted),
      [false, true],
    );
    assert.deepEqual(h.watch.holds(), []);
    h.watch.stop();
  });

  it('reads on every poll, so a hold set and lifted between two reads still leads to a read', async () => {
    const h = harness();
    await h.watch.start();
    h.set([hold('all', '*')]);
    h.set([]);
    await h.clock.advance(2000);
    assert.equal(h.reads.length, 2, 'the refused work is looked at again on each read');
    h.watch.stop();
  });

  it('drains this replica alone, and reads as lifted when the drain ends', async () => {
    const h = harness();
    await h.watch.start();
    assert.equal(h.watch.undrain(), false, 'not draining');
    h.watch.drain();
    assert.equal(h.watch.draining(), true);
    assert.equal(h.watch.undrain(), true);
    assert.equal(h.watch.draining(), false);
    assert.deepEqual(h.reads.at(-1), { holds: [], lifted: true });
    h.watch.stop();
  });

  it('keeps the last holds when a read fails', async () => {
    const clock = createManualClock();
    let fail = false;
    const watch = createDispatchWatch({
      store: {
        listHolds: async () => {
          if (fail) throw new Error('store down');
          return [hold('agent', 'main')];
        },
      },
      clock,
      log: createLog({ level: 'silent' }),
      onRead: () => undefined,
    });
    await watch.start();
    fail = true;
    await watch.refresh();
    assert.deepEqual(
      watch.holds().map((x) => x.key),
      ['main'],
    );
    watch.stop();
  });
});
