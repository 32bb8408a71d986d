/**
 * The transform process on its own, driven through its two descriptors as the gateway drives it:
 * once the gateway is gone (the calls' pipe ends), the process ends, whatever its transforms did
 * to `process.exit`.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Readable, Writable } from 'node:stream';

const WORKER = fileURLToPath(new URL('./transform-worker.js', import.meta.url));

let root: string;
before(() => {
  root = mkdtempSync(join(tmpdir(), 'hookgate-transform-worker-'));
});
after(() => rmSync(root, { recursive: true, force: true }));

/** Resolves with the first line the process answers with. */
function firstLine(answers: Readable): Promise<string> {
  return new Promise((resolve) => {
    let text = '';
    const onData = (chunk: Buffer): void => {
      text += chunk.toString('utf8');
      const end = text.indexOf('\n');
      if (end < 0) return;
      answers.off('data', onData);
      resolve(text.slice(0, end));
    };
    answers.on('data', onData);
  });
}

describe('the transform process', () => {
  it("ends when the calls' pipe ends, though a transform made process.exit and process.reallyExit do nothing and keeps a timer", async () => {
    const file = join(root, 'stays.js');
    writeFileSync(
      file,
      [
        'export default () => {',
        '  process.exit = () => undefined;',
        '  process.reallyExit = () => undefined;',
        '  setInterval(() => undefined, 1000);',
        '  return { message: "staying" };',
        '};',
      ].join('\n'),
    );
    const child = spawn(process.execPath, [WORKER, root], { stdio: ['ignore', 'inherit', 'inherit', 'pipe', 'pipe'] });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      const calls = child.stdio[3] as Writable;
      const answers = child.stdio[4] as Readable;
      assert.deepEqual(JSON.parse(await firstLine(answers)), { kind: 'ready' });
      const answered = firstLine(answers);
      const input = { payload: {}, headers: {}, url: '/hooks/x', path: 'x' };
      calls.write(`${JSON.stringify({ id: 1, file, exportName: 'default', input, maxResultBytes: 1024 })}\n`);
      assert.deepEqual(JSON.parse(await answered), { kind: 'answer', id: 1, ok: true, result: { message: 'staying' } });
      calls.end();
      const timeout = new Promise<string>((resolve) =>
        setTimeout(() => resolve('still running after 5 s'), 5000).unref(),
      );
      assert.equal(await Promise.race([exited, timeout]), 0);
    } finally {
      child.kill('SIGKILL');
    }
  });
});
