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
});
// No flush: sonic-boom's flushSync writes what it holds at once, beside a write still in flight.
setTimeout(() => process.exit(0), 400);
`);
    const order = stderr
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { msg: string; n?: number })
      .map((l) => (l.n === undefined ? l.msg : String(l.n)));
    assert.deepEqual(order, ['a', '1', '2', 'b', '3', '4', 'c', '5']);
  });

  it('writes a lone line within moments, nothing after it and no flush', async () => {
    const stderr = await runChild(`
const { createLog } = await import(${JSON.stringify(LOG_MODULE)});
const log = createLog({ level: 'info' });
log.fixedLine('info', 'hook request')('"n":1');
const started = Date.now();
const wait = setInterval(() => { if (Date.now() - started > 400) { clearInterval(wait); process.exit(0); } }, 20);
`);
    assert.match(stderr, /"n":1/);
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
    // A report may get into the buffer between two pieces that do not: each counts what it saw.
    const reports = stderr
      .split('\n')
      .filter((l) => l.includes('log lines dropped'))
      .map((l) => JSON.parse(l) as { dropped: number });
    assert.ok(reports.length >= 1, stderr.slice(-300));
    const dropped = reports.reduce((n, r) => n + r.dropped, 0);
    const written = stderr.split('\n').filter((l) => l.includes('"hook request"')).length;
    assert.ok(dropped > 15_000, `dropped ${dropped}`);
    assert.equal(written + dropped, 20_000, 'every line is either written or counted');
  });
});
