import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  mkdirSync,
  mkdtempSync,
  realpathSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import {
  createTransformRunner,
  TransformError,
  type TransformInput,
  type TransformSpec,
  type WorkerTransformRunner,
} from './create-transform-runner.js';

const INPUT: TransformInput = {
  payload: { n: 2, who: 'kestrel' },
  headers: { 'x-github-event': 'push', host: 'gateway.example:8787' },
  url: '/hooks/shape?x=1',
  path: 'shape',
};

/** Generous: the first TypeScript load starts the loader thread and amaro on a busy machine. */
const TIMEOUT_MS = 20_000;

let base: string;
let root: string;
let outside: string;
let run: WorkerTransformRunner;

function write(rel: string, source: string, dir = root): string {
  const file = join(dir, rel);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, source);
  return file;
}

/** Sets a file's mtime `seconds` after a fixed point, so ordering never depends on the clock. */
function setMtime(file: string, seconds: number): void {
  const t = new Date(Date.UTC(2030, 0, 1) + seconds * 1000);
  utimesSync(file, t, t);
}

/** A spec the way a compiled mapping carries it; each module gets its own worker unless `key` says otherwise. */
function spec(
  file: string,
  options: {
    key?: string;
    exportName?: string;
    timeoutMs?: number;
    maxMemoryMb?: number;
    maxResultBytes?: number;
  } = {},
): TransformSpec {
  return {
    key: options.key ?? file,
    file,
    exportName: options.exportName ?? 'default',
    timeoutMs: options.timeoutMs ?? TIMEOUT_MS,
    maxMemoryMb: options.maxMemoryMb ?? 128,
    maxResultBytes: options.maxResultBytes ?? 256 * 1024,
  };
}

function call(rel: string, options: Parameters<typeof spec>[1] & { input?: TransformInput } = {}): Promise<unknown> {
  return run(spec(join(root, rel), { key: 'shared', ...options }), options.input ?? INPUT);
}

async function assertTransformError(promise: Promise<unknown>, pattern: RegExp): Promise<TransformError> {
  let caught: unknown;
  try {
    await promise;
  } catch (error) {
    caught = error;
  }
  assert.ok(caught instanceof TransformError, `a TransformError, got ${String(caught)}`);
  assert.match(caught.message, pattern);
  return caught;
}

before(() => {
  base = mkdtempSync(join(tmpdir(), 'hookgate-transforms-'));
  root = join(base, 'hooks', 'transforms');
  outside = join(base, 'outside');
  mkdirSync(root, { recursive: true });
  mkdirSync(outside, { recursive: true });
  run = createTransformRunner(root);
});

after(async () => {
  await run.close();
  rmSync(base, { recursive: true, force: true });
});

describe('createTransformRunner: probe', () => {
  it('answers null for a module whose export is a function, without calling it', async () => {
    write('probe-ok.js', 'globalThis.called = 0;\nexport default () => { throw new Error("must not be called"); };');
    assert.equal(
      await run.probe({
        file: join(root, 'probe-ok.js'),
        exportName: 'default',
        timeoutMs: TIMEOUT_MS,
        key: 'probe',
        maxMemoryMb: 64,
        maxResultBytes: 262_144,
      }),
      null,
    );
  });

  it('names the problem when the configured export is not a function', async () => {
    write('probe-bad.js', 'export const toAction = "not a function";');
    const problem = await run.probe({
      file: join(root, 'probe-bad.js'),
      exportName: 'toAction',
      timeoutMs: TIMEOUT_MS,
      key: 'probe',
      maxMemoryMb: 64,
      maxResultBytes: 262_144,
    });
    assert.match(String(problem), /export "toAction" is not a function/);
  });

  it('fails for a module that does not load', async () => {
    write('probe-throws.js', 'throw new Error("probe kaboom");');
    await assertTransformError(
      run.probe({
        file: join(root, 'probe-throws.js'),
        exportName: 'default',
        timeoutMs: TIMEOUT_MS,
        key: 'probe',
        maxMemoryMb: 64,
        maxResultBytes: 262_144,
      }),
      /failed to load.*probe kaboom/,
    );
  });
});

describe('createTransformRunner: JavaScript modules', () => {
  it('calls the default export with the input and returns its result', async () => {
    write(
      'default.js',
      'export default (input) => ({ message: `${input.path}:${input.payload.n}:${input.headers["x-github-event"]}:${input.url}` });',
    );
    assert.deepEqual(await call('default.js'), { message: 'shape:2:push:http://gateway.example:8787/hooks/shape?x=1' });
  });

  it('passes url as a URL, so searchParams and pathname work (OpenClaw transforms use them)', async () => {
    write(
      'url.js',
      'export default (ctx) => ({ message: `${ctx.url instanceof URL}:${ctx.url.pathname}:${ctx.url.searchParams.get("x")}` });',
    );
    assert.deepEqual(await call('url.js'), { message: 'true:/hooks/shape:1' });
  });

  it('calls a named transform export when there is no default export', async () => {
    write(
      'openclaw-style.js',
      'export function transform(ctx) { return { message: "named transform " + ctx.payload.who }; }',
    );
    assert.deepEqual(await call('openclaw-style.js'), { message: 'named transform kestrel' });
  });

  it('prefers the default export over a named transform', async () => {
    write(
      'both.js',
      'export default () => ({ message: "default" });\nexport const transform = () => ({ message: "named" });',
    );
    assert.deepEqual(await call('both.js'), { message: 'default' });
  });

  it('refuses a module with neither a default nor a transform function, naming what it exports', async () => {
    write('neither.js', 'export const shape = () => ({});\nexport const version = 2;');
    await assertTransformError(
      call('neither.js'),
      /neither a default function nor a function named "transform".*shape/,
    );
  });

  it('calls a named export', async () => {
    write(
      'named.js',
      'export default () => ({ message: "default" });\nexport function toAction(input) { return { message: "named " + input.payload.who }; }',
    );
    assert.deepEqual(await call('named.js', { exportName: 'toAction' }), { message: 'named kestrel' });
  });

  it('awaits an async function', async () => {
    write(
      'async.js',
      'export default async (input) => { await new Promise((r) => setTimeout(r, 20)); return { message: "late " + input.payload.n }; };',
    );
    assert.deepEqual(await call('async.js'), { message: 'late 2' });
  });

  it('returns null and undefined as they are', async () => {
    write('null.js', 'export default () => null;');
    write('nothing.js', 'export default () => {};');
    assert.equal(await call('null.js'), null);
    assert.equal(await call('nothing.js'), undefined);
  });

  it('wraps a thrown error, keeping it as the cause', async () => {
    write('throws.js', 'export default () => { throw new RangeError("kaboom-7f3a"); };');
    const error = await assertTransformError(call('throws.js'), /kaboom-7f3a/);
    // Transforms run in a worker thread: the cause arrives as its name and message.
    assert.deepEqual(error.cause, { name: 'RangeError', message: 'kaboom-7f3a' });
  });

  it('names the file, line and column a transform threw at', async () => {
    write('lib/where.js', 'export default () => {\n  const x = 1;\n  throw new Error("at-line-3");\n};\n');
    await assertTransformError(call('lib/where.js'), /at-line-3 \(at lib[\\/]where\.js:3:9\)/);
  });

  it('names the line and column of a TypeScript transform as written', async () => {
    write(
      'typed-where.ts',
      'interface Payload {\n  n: number;\n}\nexport default (input: { payload: Payload }): never => {\n  throw new Error(`typed ${input.payload.n}`);\n};\n',
    );
    await assertTransformError(call('typed-where.ts'), /typed 2 \(at typed-where\.ts:5:9\)/);
  });

  it('wraps a rejected promise', async () => {
    write('rejects.js', 'export default async () => { throw new Error("async kaboom"); };');
    await assertTransformError(call('rejects.js'), /async kaboom/);
  });

  it('wraps a thrown non-error value', async () => {
    write('throws-string.js', 'export default () => { throw "plain string"; };');
    await assertTransformError(call('throws-string.js'), /transform threw/);
  });

  it('refuses a module with a syntax error', async () => {
    write('syntax.js', 'export default (input) => { return { message: ; };');
    await assertTransformError(call('syntax.js'), /failed to load/);
  });

  it('refuses a module whose top level throws', async () => {
    write('top-throws.js', 'throw new Error("top-level kaboom");\nexport default () => ({});');
    await assertTransformError(call('top-throws.js'), /failed to load.*top-level kaboom/);
  });

  it('refuses an export that is not a function', async () => {
    write('not-fn.js', 'export default { message: "object" };\nexport const answer = 42;');
    await assertTransformError(call('not-fn.js'), /export "default" is not a function/);
    await assertTransformError(call('not-fn.js', { exportName: 'answer' }), /"answer" is not a function/);
    await assertTransformError(call('not-fn.js', { exportName: 'missing' }), /"missing" is not a function/);
  });

  it('cuts off a transform stuck in a synchronous loop, and keeps serving the next call', async () => {
    write('spins.js', 'export default () => { for (;;) {} };');
    write('fine.js', 'export default () => ({ message: "still here" });');
    await assertTransformError(call('spins.js', { timeoutMs: 200 }), /timed out after 200 ms/);
    assert.deepEqual(await call('fine.js'), { message: 'still here' });
  });

  it('survives a transform that calls process.exit', async () => {
    write('exits.js', 'export default () => { process.exit(3); };');
    write('fine2.js', 'export default () => ({ message: "alive" });');
    await assertTransformError(call('exits.js'), /process exited/);
    assert.deepEqual(await call('fine2.js'), { message: 'alive' });
  });

  it('refuses a result that is not plain data', async () => {
    write('returns-fn.js', 'export default () => ({ message: "x", fn() {} });');
    await assertTransformError(call('returns-fn.js'), /not plain data/);
  });

  it('times out a promise that never settles', async () => {
    write('never.js', 'export default () => new Promise(() => {});');
    const started = performance.now();
    await assertTransformError(call('never.js', { timeoutMs: 200 }), /timed out after 200 ms/);
    const elapsed = performance.now() - started;
    assert.ok(elapsed >= 150, `waited ${elapsed} ms`);
    assert.ok(elapsed < 10_000, `gave up in time: ${elapsed} ms`);
  });

  it('times out a module whose top-level await never settles', async () => {
    write('never-loads.js', 'await new Promise(() => {});\nexport default () => ({});');
    await assertTransformError(call('never-loads.js', { timeoutMs: 200 }), /timed out after 200 ms/);
  });

  it('refuses a missing module', async () => {
    await assertTransformError(call('missing.js'), /not found/);
  });

  it('refuses a symlink inside the directory that points outside it', async () => {
    const target = write('evil.js', 'export default () => ({ message: "outside" });', outside);
    symlinkSync(target, join(root, 'evil-link.js'));
    await assertTransformError(call('evil-link.js'), /outside/);
  });

  it('refuses a module swapped for an outside symlink after it was loaded once', async () => {
    write('swapped.js', 'export default () => ({ message: "inside" });');
    assert.deepEqual(await call('swapped.js'), { message: 'inside' });
    const target = write('swapped-target.js', 'export default () => ({ message: "outside" });', outside);
    rmSync(join(root, 'swapped.js'));
    symlinkSync(target, join(root, 'swapped.js'));
    await assertTransformError(call('swapped.js'), /outside/);
  });

  it('follows a symlink that stays inside the directory', async () => {
    write('real/inner.js', 'export default () => ({ message: "via link" });');
    symlinkSync(join(root, 'real', 'inner.js'), join(root, 'inner-link.js'));
    assert.deepEqual(await call('inner-link.js'), { message: 'via link' });
  });

  it('works when the transforms directory itself is reached through a symlink', async () => {
    const linked = join(base, 'linked-transforms');
    symlinkSync(root, linked, 'dir');
    write('through-link.js', 'export default () => ({ message: "linked root" });');
    const viaLink = createTransformRunner(linked);
    try {
      const result = await viaLink(spec(join(linked, 'through-link.js')), INPUT);
      assert.deepEqual(result, { message: 'linked root' });
    } finally {
      await viaLink.close();
    }
    assert.notEqual(realpathSync(linked), linked);
  });

  it('loads a module whose file name starts with two dots (it is inside the directory)', async () => {
    write('..dotted.js', 'export default () => ({ message: "dotted" });');
    assert.deepEqual(await call('..dotted.js'), { message: 'dotted' });
  });
});

describe('createTransformRunner: hot reload', () => {
  it('keeps one module instance while the file is unchanged', async () => {
    write('counter.js', 'let n = 0;\nexport default () => ({ message: String(++n) });');
    assert.deepEqual(await call('counter.js'), { message: '1' });
    assert.deepEqual(await call('counter.js'), { message: '2' });
  });

  it('uses the new code once the file changed, without a restart', async () => {
    const file = write('reload.js', 'export default () => ({ message: "v1" });');
    setMtime(file, 0);
    assert.deepEqual(await call('reload.js'), { message: 'v1' });
    writeFileSync(file, 'export default () => ({ message: "v2" });');
    setMtime(file, 10);
    assert.deepEqual(await call('reload.js'), { message: 'v2' });
  });

  it('reloads a TypeScript module too', async () => {
    const file = write('reload-ts.ts', 'export default (): { message: string } => ({ message: "ts v1" });');
    setMtime(file, 0);
    assert.deepEqual(await call('reload-ts.ts'), { message: 'ts v1' });
    writeFileSync(file, 'export default (): { message: string } => ({ message: "ts v2" });');
    setMtime(file, 10);
    assert.deepEqual(await call('reload-ts.ts'), { message: 'ts v2' });
  });
});

describe('createTransformRunner: TypeScript modules', () => {
  it('loads a module with type annotations, an interface and an enum', async () => {
    write(
      'typed.ts',
      [
        'interface Input { payload: Record<string, unknown>; path: string }',
        'enum Level { Low = "low", High = "high" }',
        'type Action = { message: string; thinking: Level };',
        'export default function shape(input: Input): Action {',
        '  const n = input.payload["n"] as number;',
        '  return { message: `typed ${input.path} ${n * 2}`, thinking: n > 1 ? Level.High : Level.Low };',
        '}',
      ].join('\n'),
    );
    assert.deepEqual(await call('typed.ts'), { message: 'typed shape 4', thinking: 'high' });
  });

  it('resolves "./helper.js" to helper.ts when only the TypeScript file exists', async () => {
    write('lib/helper.ts', 'export const shout = (s: string): string => s.toUpperCase();');
    write(
      'uses-helper.ts',
      'import { shout } from "./lib/helper.js";\nexport default (input: { path: string }) => ({ message: shout(input.path) });',
    );
    assert.deepEqual(await call('uses-helper.ts'), { message: 'SHAPE' });
  });

  it('uses a precompiled .js beside the .ts when the .js is newer', async () => {
    const ts = write('pre.ts', 'export default (): { message: string } => ({ message: "from ts" });');
    const js = write('pre.js', 'export default () => ({ message: "from js" });');
    setMtime(ts, 0);
    setMtime(js, 5);
    assert.deepEqual(await call('pre.ts'), { message: 'from js' });
  });

  it('uses the .ts when the .js beside it is older', async () => {
    const ts = write('stale.ts', 'export default (): { message: string } => ({ message: "from ts" });');
    const js = write('stale.js', 'export default () => ({ message: "stale js" });');
    setMtime(js, 0);
    setMtime(ts, 5);
    assert.ok(statSync(ts).mtimeMs > statSync(js).mtimeMs);
    assert.deepEqual(await call('stale.ts'), { message: 'from ts' });
  });

  it('refuses a TypeScript module with a syntax error', async () => {
    write('broken.ts', 'export default (input: ) => ({ message: "x" });');
    await assertTransformError(call('broken.ts'), /failed to load/);
  });
});
