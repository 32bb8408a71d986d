/**
 * The transform pool's bounds: memory caps (heap and buffers), one worker per mapping so a stuck or
 * broken transform fails only its own calls, results capped in size and depth, and the process-wide
 * calls a transform must not reach. Each bound is exercised by a transform that breaks it.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  createTransformRunner,
  TransformError,
  type TransformInput,
  type TransformSpec,
  type WorkerTransformRunner,
} from './create-transform-runner.js';

const INPUT: TransformInput = { payload: { n: 1 }, headers: {}, url: '/hooks/x', path: 'x' };
/** Long enough that only the bound under test, never the timeout, can end these calls. */
const LONG_MS = 60_000;

let root: string;
let run: WorkerTransformRunner;

function write(rel: string, source: string): string {
  const file = join(root, rel);
  writeFileSync(file, source);
  return file;
}

function spec(key: string, rel: string, options: Partial<TransformSpec> = {}): TransformSpec {
  return {
    key,
    file: join(root, rel),
    exportName: 'default',
    timeoutMs: LONG_MS,
    maxMemoryMb: 128,
    maxResultBytes: 256 * 1024,
    ...options,
  };
}

async function refused(promise: Promise<unknown>, pattern: RegExp): Promise<void> {
  let caught: unknown;
  try {
    await promise;
  } catch (error) {
    caught = error;
  }
  assert.ok(caught instanceof TransformError, `a TransformError, got ${String(caught)}`);
  assert.match(caught.message, pattern);
}

/** Calls `fast` at `key` one after another until `done` settles; every call must answer. */
async function keepCalling(key: string, done: Promise<unknown>): Promise<number> {
  let settled = false;
  void done.then(
    () => (settled = true),
    () => (settled = true),
  );
  let answered = 0;
  while (!settled || answered < 3) {
    assert.deepEqual(await run(spec(key, 'fast.js'), INPUT), { message: 'fast' });
    answered++;
  }
  return answered;
}

before(() => {
  root = mkdtempSync(join(tmpdir(), 'hookgate-transform-bounds-'));
  mkdirSync(root, { recursive: true });
  write('fast.js', 'export default () => ({ message: "fast" });');
  // The bounds hold without Node's permission model too (a Node before 20.8 has none), and some of
  // these transforms write a file or run WASI, which it refuses: transform-permissions.test.ts has it.
  run = createTransformRunner(root, { permissionFlags: [] });
});
after(async () => {
  await run.close();
  rmSync(root, { recursive: true, force: true });
});

describe('transform memory caps', () => {
  it('ends a transform holding Buffer.allocUnsafe in a synchronous loop, while another mapping keeps answering', async () => {
    write(
      'buffers-sync.js',
      'export default () => { const keep = []; for (;;) keep.push(Buffer.allocUnsafe(1 << 20).fill(1)); };',
    );
    const hog = run(spec('hog', 'buffers-sync.js', { maxMemoryMb: 32 }), INPUT);
    const [answered] = await Promise.all([
      keepCalling('other', hog),
      refused(hog, /over its 32 MB cap \(transform\.maxMemoryMb\)/),
    ]);
    assert.ok(answered >= 3);
  });

  it('ends a transform piling up buffers between awaits, from the buffers it reports', async () => {
    write(
      'buffers-async.js',
      [
        'export default async () => {',
        '  const keep = [];',
        '  for (;;) { keep.push(Buffer.allocUnsafe(4 << 20)); await new Promise((r) => setTimeout(r, 1)); }',
        '};',
      ].join('\n'),
    );
    await refused(run(spec('async-hog', 'buffers-async.js', { maxMemoryMb: 32 }), INPUT), /over its 32 MB cap/);
  });

  it("applies a mapping's new memory cap (a reload) though its worker is alive and busy with calls", async () => {
    assert.deepEqual(await run(spec('recapped', 'fast.js', { maxMemoryMb: 256 }), INPUT), { message: 'fast' });
    await refused(run(spec('recapped', 'buffers-async.js', { maxMemoryMb: 32 }), INPUT), /over its 32 MB cap/);
  });

  it('ends a transform piling up SharedArrayBuffers, which no report of its own would show', async () => {
    write(
      'shared.js',
      [
        'export default async () => {',
        '  const keep = [];',
        '  for (;;) { keep.push(new Uint8Array(new SharedArrayBuffer(8 << 20)).fill(1)); await new Promise((r) => setTimeout(r, 1)); }',
        '};',
      ].join('\n'),
    );
    await refused(run(spec('shared-hog', 'shared.js', { maxMemoryMb: 32 }), INPUT), /over its 32 MB cap/);
  });

  it('ends a transform that grows while it tells its own process it holds nothing', async () => {
    write(
      'lies.js',
      [
        'export default async () => {',
        '  process.memoryUsage = () => ({ rss: 0, heapTotal: 0, heapUsed: 0, external: 0, arrayBuffers: 0 });',
        '  const keep = [];',
        '  for (;;) { keep.push(Buffer.alloc(8 << 20, 1)); await new Promise((r) => setTimeout(r, 1)); }',
        '};',
      ].join('\n'),
    );
    await refused(run(spec('liar', 'lies.js', { maxMemoryMb: 32 }), INPUT), /over its 32 MB cap/);
  });

  it('ends a transform whose JS heap passes its cap', async () => {
    write(
      'heap.js',
      'export default () => { const keep = []; for (;;) keep.push({ n: keep.length, pad: new Array(64).fill(keep.length) }); };',
    );
    // V8 ends the process at its heap limit, unless the watchdog saw it grow past the cap first.
    await refused(
      run(spec('heap-hog', 'heap.js', { maxMemoryMb: 32 }), INPUT),
      /heap passed its 32 MB cap|over its 32 MB cap/,
    );
  });

  it('starts a fresh worker for the mapping after one was ended', async () => {
    write('recovers.js', 'export default () => ({ message: "fresh" });');
    assert.deepEqual(await run(spec('hog', 'recovers.js'), INPUT), { message: 'fresh' });
  });
});

describe('one worker per mapping', () => {
  it("fails only the stuck mapping's calls while another mapping's fast transform keeps answering", async () => {
    // The transform marks that it is stuck, so the next call is sent only once the worker is busy.
    const marker = join(root, 'stuck.marker');
    write(
      'stuck.js',
      `import { writeFileSync } from 'node:fs'; export default () => { writeFileSync(${JSON.stringify(marker)}, ''); for (;;) {} };`,
    );
    const stuck = refused(run(spec('stuck', 'stuck.js', { timeoutMs: 1500 }), INPUT), /timed out after 1500 ms/);
    for (const end = Date.now() + 10_000; !existsSync(marker); await sleep(10))
      assert.ok(Date.now() < end, 'the stuck transform never started');
    // A call queued behind the stuck one on the same worker is that mapping's own call: it fails too.
    const alsoStuck = refused(
      run(spec('stuck', 'fast.js', { timeoutMs: LONG_MS }), INPUT),
      /restarted after another call to it timed out/,
    );
    const answered = await keepCalling('fast', stuck);
    assert.ok(answered >= 3);
    await stuck;
    await alsoStuck;
  });
});

describe("a transform process's own resources", () => {
  /** Threads of this process now (Linux). */
  const threads = (): number => Number(/^Threads:\s+(\d+)$/m.exec(readFileSync('/proc/self/status', 'utf8'))?.[1]);

  it('keeps descriptors a transform exhausts to its own process', async () => {
    write(
      'fds.js',
      'import { openSync } from "node:fs"; export default () => { for (;;) openSync("/dev/null", "r"); };',
    );
    await refused(run(spec('fds', 'fds.js'), INPUT), /EMFILE|too many open files/);
    assert.deepEqual(await run(spec('after-fds', 'fast.js'), INPUT), { message: 'fast' });
  });

  it("keeps libuv's thread pool a transform fills to its own process: another mapping and the gateway's file calls go on", async () => {
    const fifo = join(root, 'pool.fifo');
    execFileSync('mkfifo', [fifo]);
    // Opens of a FIFO without a writer wait on the thread pool's threads, all of them.
    write(
      'pool.js',
      `import { open } from 'node:fs/promises'; export default () => { for (let i = 0; i < 8; i++) void open(${JSON.stringify(fifo)}); return new Promise(() => {}); };`,
    );
    const stuck = refused(run(spec('pool', 'pool.js', { timeoutMs: 3000 }), INPUT), /timed out after 3000 ms/);
    await sleep(300);
    const began = performance.now();
    await stat(root);
    assert.deepEqual(await run(spec('beside-pool', 'fast.js'), INPUT), { message: 'fast' });
    assert.ok(
      performance.now() - began < 2000,
      "the gateway's file call and the other mapping answered while the pool was full",
    );
    await stuck;
  });

  it('ends a transform blocked in a system call, without a thread left behind for each call', async () => {
    const fifo = join(root, 'blocks.fifo');
    execFileSync('mkfifo', [fifo]);
    write(
      'blocks.js',
      `import { openSync } from 'node:fs'; export default () => { openSync(${JSON.stringify(fifo)}, 'r'); };`,
    );
    const before = threads();
    for (let i = 0; i < 5; i++)
      await refused(run(spec('blocks', 'blocks.js', { timeoutMs: 300 }), INPUT), /timed out after 300 ms/);
    assert.ok(threads() <= before + 1, `threads ${before} before, ${threads()} after five calls blocked in open(2)`);
    assert.deepEqual(await run(spec('after-blocks', 'fast.js'), INPUT), { message: 'fast' });
  });
});

describe('transform results', () => {
  it('refuses a result larger than maxResultBytes as JSON', async () => {
    write('big.js', 'export default () => ({ message: "x".repeat(2000) });');
    await refused(
      run(spec('big', 'big.js', { maxResultBytes: 1024 }), INPUT),
      /more than the 1024 allowed \(hooks\.maxBodyBytes\)/,
    );
  });

  it('accepts a result just under the cap', async () => {
    write('fits.js', 'export default () => ({ message: "x".repeat(900) });');
    assert.deepEqual(await run(spec('fits', 'fits.js', { maxResultBytes: 1024 }), INPUT), { message: 'x'.repeat(900) });
  });

  it('refuses a result nested 5,000 levels deep', async () => {
    write(
      'deep.js',
      'export default () => { let v = {}; for (let i = 0; i < 5000; i++) v = { v }; return { message: "deep", v }; };',
    );
    await refused(run(spec('deep', 'deep.js'), INPUT), /nests deeper than 100 levels/);
  });

  it("refuses a result a transform writes past the checks on the answers' descriptor itself", async () => {
    write(
      'forged.js',
      [
        'import { writeSync } from "node:fs";',
        'export default () => { writeSync(4, JSON.stringify({ kind: "answer", id: 1, ok: true, result: { message: "y".repeat(5000) } }) + "\\n"); return new Promise(() => {}); };',
      ].join('\n'),
    );
    await refused(
      run(spec('forged', 'forged.js', { maxResultBytes: 1024, timeoutMs: 5000 }), INPUT),
      /more than the 1024 allowed/,
    );
  });

  it('ends a transform process that writes an answer longer than its calls may return, holding none of it', async () => {
    write(
      'floods.js',
      [
        'import { writeSync } from "node:fs";',
        'export default () => { const chunk = "z".repeat(1 << 20); for (let i = 0; i < 64; i++) writeSync(4, chunk); return new Promise(() => {}); };',
      ].join('\n'),
    );
    await refused(
      run(spec('floods', 'floods.js', { maxResultBytes: 1024, timeoutMs: 10_000 }), INPUT),
      /KB in one answer, more than its calls may return/,
    );
  });

  it('ends a transform process that answers a call it was not given', async () => {
    write(
      'stray.js',
      [
        'import { writeSync } from "node:fs";',
        'export default () => { writeSync(4, JSON.stringify({ kind: "answer", id: 99, ok: true, result: {} }) + "\\n"); return new Promise(() => {}); };',
      ].join('\n'),
    );
    await refused(run(spec('stray', 'stray.js', { timeoutMs: 10_000 }), INPUT), /answered a call it was not given/);
  });

  it('takes a result as JSON: a Map crosses as {}, not as the data it holds', async () => {
    write('map.js', 'export default () => ({ message: "ok", m: new Map([[1, "x".repeat(1 << 20)]]) });');
    assert.deepEqual(await run(spec('map', 'map.js', { maxResultBytes: 1024 }), INPUT), { message: 'ok', m: {} });
  });
});

describe("process-wide calls are out of a transform's reach", () => {
  const attempts: Array<[string, string, RegExp]> = [
    [
      'process.kill(process.pid, "SIGKILL")',
      'export default () => { process.kill(process.pid, "SIGKILL"); };',
      /process\.kill is not available/,
    ],
    [
      'process.kill of the parent with SIGTERM',
      'export default () => { process.kill(process.ppid, "SIGTERM"); };',
      /process\.kill is not available/,
    ],
    ['process._kill', 'export default () => { process._kill(process.pid, 9); };', /process\._kill is not available/],
    [
      'restoring process.kill',
      'export default () => { delete process.kill; process.kill(process.pid, 9); };',
      /Cannot delete property 'kill'/,
    ],
    ['process.abort', 'export default () => { process.abort(); };', /process\.abort is not available/],
    [
      'child_process by import',
      'import { execSync } from "node:child_process";\nexport default () => { execSync(`kill -9 ${process.pid}`); };',
      /child_process\.execSync is not available/,
    ],
    [
      'child_process by dynamic import',
      'export default async () => { const cp = await import("child_process"); cp.spawnSync("kill", ["-9", String(process.pid)]); };',
      /child_process\.spawnSync is not available/,
    ],
    [
      'child_process by require',
      'import { createRequire } from "node:module";\nexport default () => { createRequire(import.meta.url)("child_process").execFileSync("kill", ["-9", String(process.pid)]); };',
      /child_process\.execFileSync is not available/,
    ],
    [
      'child_process by getBuiltinModule',
      'export default () => { process.getBuiltinModule("node:child_process").exec(`kill -9 ${process.pid}`); };',
      /child_process\.exec is not available/,
    ],
    [
      'process.binding("spawn_sync")',
      'export default () => { process.binding("spawn_sync"); };',
      /process\.binding is not available/,
    ],
    [
      'a nested worker',
      'import { Worker } from "node:worker_threads";\nexport default () => { new Worker("process.kill(process.pid, 9)", { eval: true }); };',
      /worker_threads\.Worker is not available/,
    ],
    [
      'the inspector',
      'import { Session } from "node:inspector";\nexport default () => { new Session().connectToMainThread(); };',
      /inspector\.Session is not available/,
    ],
    [
      'process._debugProcess',
      'export default () => { process._debugProcess(process.pid); };',
      /process\._debugProcess is not available/,
    ],
    // Loader hooks run in a thread of their own, which the guard does not reach.
    [
      'module.register by import',
      'import { register } from "node:module";\nexport default () => { register("data:text/javascript,export{}"); };',
      /module\.register is not available/,
    ],
    [
      'module.register by require',
      'import { createRequire } from "node:module";\nexport default () => { createRequire(import.meta.url)("node:module").register("data:text/javascript,export{}"); };',
      /module\.register is not available/,
    ],
  ];
  for (const [name, source, pattern] of attempts) {
    it(`refuses ${name} and the process lives on`, async () => {
      const file = `attempt-${name.replace(/[^a-z]+/gi, '-')}.js`;
      write(file, source);
      await refused(run(spec(`attempt:${name}`, file, { timeoutMs: 10_000 }), INPUT), pattern);
      assert.deepEqual(await run(spec('after-attempt', 'fast.js'), INPUT), { message: 'fast' });
    });
  }

  it('ends a transform process that says it is ready again, which would reset the floor its memory is measured from', async () => {
    write(
      'ready-again.js',
      'import { writeSync } from "node:fs";\nexport default () => { writeSync(4, \'{"kind":"ready"}\\n\'); return new Promise(() => {}); };',
    );
    await refused(run(spec('ready-again', 'ready-again.js'), INPUT), /said it was ready again/);
    assert.deepEqual(await run(spec('after-ready-again', 'fast.js'), INPUT), { message: 'fast' });
  });

  it('still lets process.exit end only the transform process', async () => {
    write('exits.js', 'export default () => { process.exit(7); };');
    await refused(run(spec('exits', 'exits.js'), INPUT), /process exited \(code 7\)/);
  });

  it("lets WASI's proc_exit end only the transform process", async () => {
    // A WebAssembly module whose start function calls wasi_snapshot_preview1.proc_exit(7).
    const wasm = Buffer.from(
      'AGFzbQEAAAABCAJgAX8AYAAAAiQBFndhc2lfc25hcHNob3RfcHJldmlldzEJcHJvY19leGl0AAADAgEBBQMBAAEHEwIGX3N0YXJ0AAEGbWVtb3J5AgAKCAEGAEEHEAAL',
      'base64',
    );
    write(
      'wasi.js',
      [
        'import { WASI } from "node:wasi";',
        `const bytes = Buffer.from(${JSON.stringify(wasm.toString('base64'))}, "base64");`,
        'export default async () => {',
        '  const wasi = new WASI({ version: "preview1", returnOnExit: false });',
        '  const { instance } = await WebAssembly.instantiate(bytes, { wasi_snapshot_preview1: wasi.wasiImport });',
        '  wasi.start(instance);',
        '};',
      ].join('\n'),
    );
    await refused(run(spec('wasi', 'wasi.js'), INPUT), /process exited/);
    assert.deepEqual(await run(spec('after-wasi', 'fast.js'), INPUT), { message: 'fast' });
  });
});
