import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { createCoalescedTask } from './create-coalesced-task.js';

describe('createCoalescedTask', () => {
  it('runs once per trigger when idle, and once more for any number of triggers during a run', async () => {
    let runs = 0;
    let concurrent = 0;
    let maxConcurrent = 0;
    const trigger = createCoalescedTask(async () => {
      runs++;
      maxConcurrent = Math.max(maxConcurrent, ++concurrent);
      await sleep(30);
      concurrent--;
    });
    trigger();
    for (let i = 0; i < 10; i++) trigger();
    await sleep(120);
    assert.equal(runs, 2);
    assert.equal(maxConcurrent, 1);
    trigger();
    await sleep(60);
    assert.equal(runs, 3);
  });
});
