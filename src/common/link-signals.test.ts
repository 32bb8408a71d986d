import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import { signalDependants } from '../../test/helpers/signal-dependants.js';
import { linkSignals } from './link-signals.js';

describe('linkSignals', () => {
  it('aborts with the reason of whichever source aborts first', () => {
    const a = new AbortController();
    const b = new AbortController();
    const linked = linkSignals([a.signal, b.signal]);
    assert.equal(linked.signal.aborted, false);
    b.abort(new Error('lease lost'));
    assert.equal(linked.signal.aborted, true);
    assert.equal((linked.signal.reason as Error).message, 'lease lost');
    assert.equal(getEventListeners(a.signal, 'abort').length, 0, 'the other source was let go');
  });

  it('is aborted at once when a source already is', () => {
    const a = new AbortController();
    a.abort('shutting down');
    const linked = linkSignals([new AbortController().signal, a.signal]);
    assert.equal(linked.signal.aborted, true);
    assert.equal(linked.signal.reason, 'shutting down');
  });

  it('leaves nothing on a long-lived source once disposed, however many times it is linked', () => {
    const shutdown = new AbortController();
    for (let i = 0; i < 1000; i++) {
      const linked = linkSignals([shutdown.signal, new AbortController().signal]);
      linked.dispose();
    }
    assert.equal(getEventListeners(shutdown.signal, 'abort').length, 0);
    const kept = signalDependants(shutdown.signal);
    if (kept !== undefined) assert.equal(kept, 0);
    // What AbortSignal.any leaves on the same Node, for comparison.
    for (let i = 0; i < 10; i++) AbortSignal.any([shutdown.signal, new AbortController().signal]);
    if (kept !== undefined) assert.equal(signalDependants(shutdown.signal), 10);
    // A disposed link no longer follows its source.
    const linked = linkSignals([shutdown.signal]);
    linked.dispose();
    shutdown.abort();
    assert.equal(linked.signal.aborted, false);
  });
});
