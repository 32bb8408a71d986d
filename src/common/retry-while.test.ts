import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createManualClock } from '../../test/helpers/manual-clock.js';
import { retryWhile } from './retry-while.js';

const unavailable = (): Error => Object.assign(new Error('store cannot write'), { code: 'UNAVAILABLE' });
const isUnavailable = (e: unknown): boolean => (e as { code?: string }).code === 'UNAVAILABLE';

describe('retryWhile', () => {
  it('tries again after pauses that double while the failures may heal, and returns what succeeds', async () => {
    const clock = createManualClock();
    const started = clock.now();
    const tries: number[] = [];
    const done = retryWhile(
      async () => {
        tries.push(clock.now() - started);
        if (tries.length < 4) throw unavailable();
        return 'written';
      },
      { clock, retryable: isUnavailable, forMs: 10_000 },
    );
    await clock.advance(1000);
    assert.equal(await done, 'written');
    assert.deepEqual(tries, [0, 100, 300, 700]);
  });

  it('gives up with the last failure once forMs has run out', async () => {
    const clock = createManualClock();
    let tries = 0;
    const done = retryWhile(
      async () => {
        tries++;
        throw unavailable();
      },
      { clock, retryable: isUnavailable, forMs: 2_000 },
    );
    const settled = assert.rejects(done, /store cannot write/);
    await clock.advance(5_000);
    await settled;
    // At 0, 100, 300, 700, 1500 ms; the next pause (1 s, the cap) would pass the 2 s.
    assert.equal(tries, 5);
  });

  it('does not try again a failure that cannot heal by waiting', async () => {
    const clock = createManualClock();
    let tries = 0;
    await assert.rejects(
      retryWhile(
        async () => {
          tries++;
          throw new Error('bad value');
        },
        { clock, retryable: isUnavailable, forMs: 10_000 },
      ),
      /bad value/,
    );
    assert.equal(tries, 1);
  });
});
