/**
 * Fixed lines (`Log.fixedLine`, the access log) on the real stderr, where they are gathered for
 * the end of the event-loop turn: every other line keeps its place among them, and a stderr
 * nobody reads drops and counts them line by line. Run in child processes whose stderr this reads.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';

const LOG_MODULE = fileURLToPath(new URL('./log.js', import.meta.url));

async function runChild(code: string, readLate = false): Promise<string> {
  const child = spawn(process.execPath, ['--input-type=module', '-e', code], { stdio: ['pipe', 'pipe', 'pipe'] });
  try {
    if (readLate) {
      child.stderr.pause();
      await once(child.stdout, 'data');
    }
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.stderr.resume();
    child.stdin.write('go\n');
    await once(child, 'exit');
    return stderr;
  } finally {
    child.kill();
  }
}

describe('createLog: fixed lines on stderr', () => {
  it('keeps every line in the order it was written', async () => {
    const stderr = await runChild(`
const { createLog } = await import(${JSON.stringify(LOG_MODULE)});
const log = createLog({ level: 'info' });
const line = log.fixedLine('info', 'hook request');
log.info('a');
line('"n":1');
line('"n":2');
log.warn('b');
line('"n":3');
setImmediate(() => {
  line('"n":4');
  log.error('c');
  line('"n":5');
  log.flush();
});
`);
    const order = stderr
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { msg: string; n?: number })
      .map((l) => (l.n === undefined ? l.msg : String(l.n)));
    assert.deepEqual(order, ['a', '1', '2', 'b', '3', '4', 'c', '5']);
  });

  it('drops what a stderr nobody reads cannot take and counts each line of it', async () => {
    const stderr = await runChild(
      `
const { createLog } = await import(${JSON.stringify(LOG_MODULE)});
const log = createLog({ level: 'info', repeatIntervalMs: 100, maxBufferedBytes: 1024 * 1024 });
const line = log.fixedLine('info', 'hook request');
const filler = 'x'.repeat(1000);
let i = 0;
// A turn at a time, as requests end, until 20,000 lines are written.
const turn = () => {
  for (let k = 0; k < 500; k++, i++) line('"i":' + i + ',"filler":"' + filler + '"');
  if (i < 20000) setImmediate(turn);
  else process.stdout.write('done\\n');
};
turn();
process.stdin.once('data', () => setTimeout(() => process.exit(0), 1500));
`,
      true,
    );
    const report = stderr
      .split('\n')
      .filter((l) => l.includes('log lines dropped'))
      .map((l) => JSON.parse(l) as { dropped: number });
    assert.equal(report.length, 1, stderr.slice(-300));
    const written = stderr.split('\n').filter((l) => l.includes('"hook request"')).length;
    assert.ok(report[0]!.dropped > 15_000, `dropped ${report[0]!.dropped}`);
    assert.equal(written + report[0]!.dropped, 20_000, 'every line is either written or counted');
  });
});
