import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { createHeartbeatScheduler } from './create-heartbeat-scheduler.js';

function recorder(turnMs: number) {
  const turns: string[] = [];
  return {
    turns,
    runTurn: async (trigger: 'request' | 'periodic') => {
      turns.push(trigger);
      if (turnMs > 0) await sleep(turnMs);
    },
  };
}

describe('createHeartbeatScheduler', () => {
  it('coalesces requests that arrive together into one turn', async () => {
    const r = recorder(0);
    const s = createHeartbeatScheduler({ runTurn: r.runTurn, everyMs: 0, coalesceMs: 20 });
    for (let i = 0; i < 10; i++) s.request();
    await sleep(80);
    assert.deepEqual(r.turns, ['request']);
    await s.stop();
  });

  it('runs exactly one more turn for requests made while a turn runs', async () => {
    const r = recorder(60);
    const s = createHeartbeatScheduler({ runTurn: r.runTurn, everyMs: 0, coalesceMs: 5 });
    s.request();
    await sleep(25); // the first turn is running now
    for (let i = 0; i < 5; i++) s.request();
    await sleep(200);
    assert.deepEqual(r.turns, ['request', 'request']);
    await s.stop();
  });

  it('ticks periodically and marks the trigger', async () => {
    const r = recorder(0);
    const s = createHeartbeatScheduler({ runTurn: r.runTurn, everyMs: 30, coalesceMs: 1 });
    s.start();
    await sleep(110);
    await s.stop();
    assert.ok(r.turns.length >= 2, `ticks: ${r.turns.length}`);
    assert.ok(r.turns.every((t) => t === 'periodic'));
  });

  it('stops: no turn after stop, and stop waits for the running one', async () => {
    const r = recorder(50);
    const s = createHeartbeatScheduler({ runTurn: r.runTurn, everyMs: 0, coalesceMs: 1 });
    s.request();
    await sleep(10);
    const started = Date.now();
    await s.stop();
    assert.ok(Date.now() - started >= 30, 'waited for the running turn');
    s.request();
    await sleep(30);
    assert.equal(r.turns.length, 1);
  });

  it('survives a failing turn', async () => {
    let calls = 0;
    const s = createHeartbeatScheduler({
      runTurn: async () => {
        calls++;
        throw new Error('model down');
      },
      everyMs: 0,
      coalesceMs: 1,
    });
    s.request();
    await sleep(20);
    s.request();
    await sleep(20);
    assert.equal(calls, 2);
    await s.stop();
  });
});
