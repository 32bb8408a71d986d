import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Log } from '../common/log.js';
import type { RelayPruneCounts, RelayPruneCutoffs } from '../store/index.js';
import { createManualClock } from '../../test/helpers/manual-clock.js';
import { createRelayPruner } from './create-relay-pruner.js';

const DAY = 86_400_000;

describe('the relay pruner', () => {
  it('prunes batch after batch from the retention cut-off, and warns with the count of what no home took', async () => {
    const clock = createManualClock();
    const asked: RelayPruneCutoffs[] = [];
    const batches: RelayPruneCounts[] = [
      { expired: 2, dead: 0, done: 2 },
      { expired: 1, dead: 1, done: 0 },
    ];
    const warnings: Array<[string, unknown]> = [];
    const log = {
      warn: (msg: string, fields: unknown) => void warnings.push([msg, fields]),
      info: () => undefined,
      error: () => undefined,
    } as unknown as Log;
    const pruner = createRelayPruner({
      store: {
        async pruneRelay(cutoffs, limit) {
          asked.push(cutoffs);
          assert.equal(limit, 2);
          return batches.shift() ?? { expired: 0, dead: 0, done: 0 };
        },
      },
      retentionMs: 7 * DAY,
      clock,
      log,
      batchSize: 2,
    });
    const total = await pruner.pruneNow();
    assert.deepEqual(total, { expired: 3, dead: 1, done: 2 });
    assert.equal(asked.length, 2, 'a batch that filled up is followed by another');
    assert.deepEqual(asked[0], { receivedBefore: clock.now() - 7 * DAY, now: clock.now() });
    batches.push({ expired: 1, dead: 0, done: 0 });
    pruner.start();
    await clock.advance(0);
    await pruner.stop();
    assert.deepEqual(warnings, [['relay dropped requests no home acknowledged within relay.retention', { count: 1 }]]);
  });
});
