/**
 * The logger's stderr when nothing reads it (a stalled journald, a full pipe): lines past
 * `maxBufferedBytes` are dropped and counted instead of held in memory, and a warning says how many
 * once stderr takes lines again. Run in a child process whose stderr this test leaves unread.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';

const LOG_MODULE = fileURLToPath(new URL('./log.js', import.meta.url));

/** Logs 40,000 lines of 1 KB into a stderr nobody reads, prints the heap's growth, then waits for `go` on stdin. */
const CHILD = `
const { createLog } = await import(${JSON.stringify(LOG_MODULE)});
const cap = Number(process.argv[1]);
const log = createLog({ level: 'info', repeatIntervalMs: 100, maxBufferedBytes: cap });
globalThis.gc();
const before = process.memoryUsage();
const filler = 'x'.repeat(1000);
for (let i = 0; i < 40000; i++) log.info('hook request', { i, filler });
globalThis.gc();
const after = process.memoryUsage();
process.stdout.write(JSON.stringify({ grewMb: (after.heapUsed + after.external - before.heapUsed - before.external) / 1e6 }) + '\\n');
process.stdin.once('data', () => setTimeout(() => process.exit(0), 1500));
`;

async function runChild(cap: number): Promise<{ grewMb: number; stderr: string }> {
  const child = spawn(process.execPath, ['--expose-gc', '--input-type=module', '-e', CHILD, String(cap)], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  try {
    child.stderr.pause();
    const [first] = (await once(child.stdout, 'data')) as [Buffer];
    const { grewMb } = JSON.parse(first.toString()) as { grewMb: number };
    // Now read stderr: what was buffered flows, then the interval's report of the dropped lines.
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.stderr.resume();
    child.stdin.write('go\n');
    await once(child, 'exit');
    return { grewMb, stderr };
  } finally {
    child.kill();
  }
}

describe('createLog with a stderr nobody reads', () => {
  it('holds at most maxBufferedBytes of lines, drops the rest and says how many once stderr moves', async () => {
    const capped = await runChild(1024 * 1024);
    assert.ok(capped.grewMb < 12, `the heap grew ${capped.grewMb.toFixed(1)} MB with a 1 MiB cap`);
    const report = capped.stderr
      .split('\n')
      .filter((l) => l.includes('log lines dropped'))
      .map((l) => JSON.parse(l) as { dropped: number; level: number });
    assert.equal(report.length, 1, capped.stderr.slice(-500));
    assert.equal(report[0]!.level, 40);
    // About 1 MiB of the 40 MB got through (plus what the pipe held): the rest were counted.
    assert.ok(report[0]!.dropped > 35_000 && report[0]!.dropped < 40_000, `dropped ${report[0]!.dropped}`);
    const written = capped.stderr.split('\n').filter((l) => l.includes('"hook request"')).length;
    assert.equal(written + report[0]!.dropped, 40_000, 'every line is either written or counted');
  });
});
