import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { createHeartbeatScheduler, type TurnAsk } from './create-heartbeat-scheduler.js';

/** `request`, `periodic`, or `both` for a turn asked for by both. */
const kind = (ask: TurnAsk): string => (ask.request && ask.periodic ? 'both' : ask.periodic ? 'periodic' : 'request');

/** Records each turn's kind; each turn takes `turnMs` and asks for a pause of `pauseMs` after it. */
function recorder(turnMs: number, pauseMs?: number) {
  const turns: string[] = [];
  const at: number[] = [];
  return {
    turns,
    at,
    runTurn: async (ask: TurnAsk) => {
      turns.push(kind(ask));
      at.push(performance.now());
      if (turnMs > 0) await sleep(turnMs);
      return pauseMs;
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

  it('keeps a periodic tick that meets waiting requests: their one turn is both', async () => {
    const r = recorder(0);
    const s = createHeartbeatScheduler({ runTurn: r.runTurn, everyMs: 40, coalesceMs: 30 });
    s.start();
    // Requests every 10 ms keep a coalescing timer set whenever the tick comes.
    for (let i = 0; i < 12; i++) {
      s.request();
      await sleep(10);
    }
    await s.stop();
    assert.ok(r.turns.includes('both'), `turns: ${r.turns.join(',')}`);
  });

  it('keeps a periodic tick made while a turn runs for the turn after it', async () => {
    const r = recorder(120);
    const s = createHeartbeatScheduler({ runTurn: r.runTurn, everyMs: 50, coalesceMs: 1 });
    s.request();
    await sleep(20); // the requested turn runs; ticks come during it
    s.start();
    await sleep(140);
    await s.stop();
    assert.equal(r.turns[0], 'request');
    assert.equal(r.turns[1], 'periodic', `turns: ${r.turns.join(',')}`);
  });

  it('after a turn that asks for a pause, requests wait it out and then share one turn', async () => {
    const r = recorder(0, 150);
    const s = createHeartbeatScheduler({ runTurn: r.runTurn, everyMs: 0, coalesceMs: 5 });
    s.request();
    await sleep(30); // the first turn ran and asked for the pause
    for (let i = 0; i < 10; i++) {
      s.request();
      await sleep(5);
    }
    assert.equal(r.turns.length, 1, 'no turn during the pause');
    await sleep(200);
    assert.deepEqual(r.turns, ['request', 'request']);
    assert.ok(r.at[1]! - r.at[0]! >= 140, `second turn ${(r.at[1]! - r.at[0]!).toFixed(0)} ms after the first`);
    await s.stop();
  });

  it('lets a periodic tick through a pause, taking the waiting requests with it', async () => {
    const r = recorder(0, 10_000);
    const s = createHeartbeatScheduler({ runTurn: r.runTurn, everyMs: 60, coalesceMs: 5 });
    s.request();
    await sleep(20);
    s.request(); // waits for the pause
    s.start();
    await sleep(100);
    await s.stop();
    assert.equal(r.turns[0], 'request');
    assert.equal(r.turns[1], 'both', `turns: ${r.turns.join(',')}`);
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

  it('survives a failing turn, and holds requests made after it until the retry', async () => {
    let calls = 0;
    const s = createHeartbeatScheduler({
      runTurn: async () => {
        calls++;
        throw new Error('model down');
      },
      everyMs: 0,
      coalesceMs: 1,
      retryFirstMs: 150,
    });
    s.request();
    await sleep(20);
    for (let i = 0; i < 5; i++) s.request();
    await sleep(60);
    assert.equal(calls, 1, 'the requests wait for the retry');
    await sleep(150);
    assert.equal(calls, 2, 'one turn for the retry and the requests together');
    await s.stop();
  });

  it('asks again for a requested turn that failed, after a wait that doubles, until one succeeds', async () => {
    const at: number[] = [];
    const s = createHeartbeatScheduler({
      runTurn: async () => {
        at.push(performance.now());
        if (at.length <= 3) throw new Error('model down');
        return undefined;
      },
      everyMs: 0,
      coalesceMs: 1,
      retryFirstMs: 40,
      retryMaxMs: 1000,
    });
    s.request();
    await sleep(600);
    assert.equal(at.length, 4, 'three failures, then the turn that succeeded, with no new request');
    const waits = at.slice(1).map((t, i) => t - at[i]!);
    assert.ok(
      waits[0]! >= 35 && waits[1]! >= 75 && waits[2]! >= 155,
      `waits of 40, 80, 160 ms: ${waits.map(Math.round).join(', ')}`,
    );
    await sleep(400);
    assert.equal(at.length, 4, 'nothing asked once a turn succeeded');
    await s.stop();
  });

  it('does not ask again for a periodic turn that failed (the next tick does)', async () => {
    let calls = 0;
    const s = createHeartbeatScheduler({
      runTurn: async () => {
        calls++;
        throw new Error('model down');
      },
      everyMs: 1000,
      coalesceMs: 1,
      retryFirstMs: 20,
    });
    s.start();
    await sleep(1150);
    await s.stop();
    assert.equal(calls, 1);
  });
});
