import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createManualClock } from '../../test/helpers/manual-clock.js';
import { createReadiness, type ReadinessDeps } from './create-readiness.js';

/** A readiness check over a probe the test answers by hand. */
function harness(overrides: Partial<ReadinessDeps> = {}) {
  const clock = createManualClock();
  const probes: Array<{ resolve: () => void; reject: (e: unknown) => void }> = [];
  let runsAlive = true;
  let started = true;
  const check = createReadiness({
    probeWrite: () => new Promise<void>((resolve, reject) => probes.push({ resolve, reject })),
    isStarted: () => started,
    loops: [{ name: 'runs', isAlive: () => runsAlive }],
    clock,
    ...overrides,
  });
  return {
    check,
    clock,
    probes,
    stopRuns: () => {
      runsAlive = false;
    },
    setStarted: (v: boolean) => {
      started = v;
    },
  };
}

const flush = async (): Promise<void> => {
  for (let i = 0; i < 5; i++) await new Promise<void>((r) => setImmediate(r));
};

describe('createReadiness', () => {
  it('is ready when the probe writes and every loop is alive', async () => {
    const h = harness();
    const answer = h.check();
    await flush();
    h.probes[0]!.resolve();
    assert.deepEqual(await answer, { ok: true });
  });

  it('carries the detail it is given beside ready and not ready alike', async () => {
    const h = harness({ detail: () => ({ dispatch: { held: true } }) });
    const answer = h.check();
    await flush();
    h.probes[0]!.resolve();
    assert.deepEqual(await answer, { ok: true, dispatch: { held: true } });
    h.setStarted(false);
    assert.deepEqual(await h.check(), {
      ok: false,
      code: 'unavailable',
      reason: 'the gateway is starting or shutting down',
      dispatch: { held: true },
    });
  });

  it('reports store_unavailable with the driver code and first line when the probe fails', async () => {
    const h = harness();
    const answer = h.check();
    await flush();
    h.probes[0]!.reject(Object.assign(new Error('database or disk is full\nmore'), { code: 'SQLITE_FULL' }));
    assert.deepEqual(await answer, {
      ok: false,
      code: 'store_unavailable',
      reason: 'store cannot write: SQLITE_FULL: database or disk is full',
    });
  });

  it('serves a probe result from its cache for cacheMs, then probes again', async () => {
    const h = harness({ cacheMs: 1000 });
    const first = h.check();
    await flush();
    h.probes[0]!.resolve();
    await first;
    await h.clock.advance(999);
    assert.deepEqual(await h.check(), { ok: true });
    assert.equal(h.probes.length, 1);
    await h.clock.advance(1);
    const third = h.check();
    await flush();
    assert.equal(h.probes.length, 2);
    h.probes[1]!.reject(new Error('database is locked'));
    assert.equal((await third).ok, false);
  });

  it('fails a probe that does not finish within timeoutMs, and never starts a second one meanwhile', async () => {
    const h = harness({ timeoutMs: 2000, cacheMs: 0 });
    const answer = h.check();
    await flush();
    await h.clock.advance(2000);
    assert.deepEqual(await answer, {
      ok: false,
      code: 'store_unavailable',
      reason: 'store write probe did not finish within 2000 ms',
    });
    const again = h.check();
    await flush();
    assert.equal(h.probes.length, 1, 'the hung probe is awaited, not doubled');
    h.probes[0]!.resolve();
    assert.deepEqual(await again, { ok: true });
  });

  it('reports worker_stalled naming the loop that stopped', async () => {
    const h = harness();
    h.stopRuns();
    const answer = h.check();
    await flush();
    h.probes[0]!.resolve();
    assert.deepEqual(await answer, {
      ok: false,
      code: 'worker_stalled',
      reason: 'the runs loop has stopped making progress',
    });
  });

  it('reports unavailable while starting or shutting down, without probing', async () => {
    const h = harness();
    h.setStarted(false);
    assert.equal((await h.check()).ok, false);
    assert.deepEqual(await h.check(), {
      ok: false,
      code: 'unavailable',
      reason: 'the gateway is starting or shutting down',
    });
    assert.equal(h.probes.length, 0);
  });
});
