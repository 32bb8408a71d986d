/**
 * The bound on transform processes alive at once (`hooks.maxTransformProcesses`): a mapping past it
 * ends the process idle the longest, or waits, within its call's timeout, for a busy one to settle.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createTransformRunner,
  TransformError,
  type TransformInput,
  type TransformSpec,
  type WorkerTransformRunner,
} from './create-transform-runner.js';

const INPUT: TransformInput = { payload: {}, headers: {}, url: '/hooks/x', path: 'x' };
const runners: WorkerTransformRunner[] = [];
let root: string;

before(() => {
  root = mkdtempSync(join(tmpdir(), 'hookgate-transform-limit-'));
  writeFileSync(join(root, 'pid.js'), 'export default () => ({ pid: process.pid });');
  writeFileSync(
    join(root, 'slow.js'),
    'export default () => new Promise((r) => setTimeout(() => r({ slow: true }), 400));',
  );
  writeFileSync(join(root, 'stuck.js'), 'export default () => new Promise(() => {});');
});
after(async () => {
  await Promise.all(runners.map((r) => r.close()));
  rmSync(root, { recursive: true, force: true });
});

function runner(maxProcesses: number): WorkerTransformRunner {
  const run = createTransformRunner(root, { maxProcesses });
  runners.push(run);
  return run;
}

const spec = (key: string, file: string, timeoutMs = 20_000): TransformSpec => ({
  key,
  file: join(root, file),
  exportName: 'default',
  timeoutMs,
  maxMemoryMb: 64,
  maxResultBytes: 1024,
});

const pidOf = async (run: WorkerTransformRunner, key: string): Promise<number> =>
  ((await run(spec(key, 'pid.js'), INPUT)) as { pid: number }).pid;

describe('transform processes alive at once', () => {
  it('ends the process idle the longest when a mapping past the bound needs one', async () => {
    const run = runner(2);
    const a = await pidOf(run, 'a');
    const b = await pidOf(run, 'b');
    const c = await pidOf(run, 'c'); // ends a's
    assert.equal(new Set([a, b, c]).size, 3);
    assert.equal(await pidOf(run, 'b'), b, 'b kept its process');
    const a2 = await pidOf(run, 'a'); // ends c's, idle longer than b's
    assert.notEqual(a2, a, 'a got a process of its own again');
    assert.equal(await pidOf(run, 'b'), b);
    assert.notEqual(await pidOf(run, 'c'), c);
  });

  it('makes a call wait for a busy process to settle when every one is busy', async () => {
    const run = runner(1);
    const started = performance.now();
    const slow = run(spec('slow', 'slow.js'), INPUT);
    await new Promise((r) => setTimeout(r, 50));
    const pid = await pidOf(run, 'waits');
    assert.ok(performance.now() - started >= 380, 'answered after the slow call settled');
    assert.deepEqual(await slow, { slow: true });
    assert.equal(typeof pid, 'number');
  });

  it('fails a call that waited its whole timeout for a place, naming the bound, while the busy one goes on', async () => {
    const run = runner(1);
    const stuck = run(spec('stuck', 'stuck.js', 60_000), INPUT);
    stuck.catch(() => undefined);
    await new Promise((r) => setTimeout(r, 50));
    let caught: unknown;
    try {
      await run(spec('other', 'pid.js', 300), INPUT);
    } catch (error) {
      caught = error;
    }
    assert.ok(caught instanceof TransformError, `a TransformError, got ${String(caught)}`);
    assert.match(caught.message, /waiting for one of 1 busy transform processes \(hooks\.maxTransformProcesses\)/);
  });
});
