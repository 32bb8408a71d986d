import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Socket } from 'node:net';
import {
  createTransformRunner,
  type TransformInput,
  type TransformSpec,
  type WorkerTransformRunner,
} from './create-transform-runner.js';
import type { TransformCall } from './transform-types.js';

/** The items of one forEach request: one input, its item set per call (as build-mapped-request.ts makes them). */
function request(tag: string, bytes: number): TransformInput {
  return {
    payload: { tag, filler: 'x'.repeat(bytes), items: [{ n: 0 }, { n: 1 }, { n: 2 }] },
    headers: { 'x-tag': tag },
    url: `/hooks/${tag}`,
    path: tag,
  };
}

describe('transform calls for the items of a forEach request', () => {
  let dir: string;
  let run: WorkerTransformRunner;
  /** The transform calls written to transform processes, in order (their pipes' writes observed). */
  const posted: TransformCall[] = [];
  const write = Socket.prototype.write;
  const spec = (file: string, timeoutMs = 20_000): TransformSpec => ({
    key: 'items',
    file: join(dir, file),
    exportName: 'default',
    timeoutMs,
    maxMemoryMb: 64,
    maxResultBytes: 262_144,
  });
  const item = (input: TransformInput, n: number, file = 'count.js'): Promise<unknown> =>
    run(spec(file), { ...input, item: { n } });

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'hookgate-items-'));
    // Changes what it is given: each call must still see the request's payload as it was sent.
    writeFileSync(
      join(dir, 'count.js'),
      `export default (ctx) => {
      ctx.payload.seen = (ctx.payload.seen ?? 0) + 1;
      ctx.payload.items.length = 0;
      return { text: ctx.item?.n + ':' + ctx.payload.tag + ':' + ctx.payload.seen + ':' + ctx.headers['x-tag'] + ':' + ctx.path + ':' + ctx.url.pathname + ':' + ctx.payload.filler.length };
    };`,
    );
    writeFileSync(join(dir, 'stuck.js'), 'export default () => { for (;;) {} };');
    Socket.prototype.write = function (this: Socket, chunk: unknown, ...rest: never[]) {
      if (typeof chunk === 'string' && chunk.startsWith('{"id":')) {
        const message = JSON.parse(chunk) as unknown;
        if (typeof message === 'object' && message !== null && 'exportName' in message)
          posted.push(message as TransformCall);
      }
      return (write as (this: Socket, ...args: unknown[]) => boolean).call(this, chunk, ...rest);
    } as typeof write;
    run = createTransformRunner(dir);
  });
  after(async () => {
    Socket.prototype.write = write;
    await run.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('sends the shared input once, and gives each item a fresh copy of it', async () => {
    const a = request('a', 50_000);
    posted.length = 0;
    const results = [];
    for (let n = 0; n < 4; n++) results.push(await item(a, n));
    assert.deepEqual(
      results,
      [0, 1, 2, 3].map((n) => ({ text: `${n}:a:1:a:a:/hooks/a:50000` })),
    );
    assert.equal(posted.length, 4);
    assert.ok('input' in posted[0]! && posted[0].keep !== undefined, 'the first item carries the input whole');
    for (const call of posted.slice(1)) {
      assert.ok('shared' in call && !('input' in call), 'later items carry only their item');
      assert.ok(
        JSON.stringify(call).length < 300,
        `a later item's call is small: ${JSON.stringify(call).length} characters`,
      );
    }
  });

  it('carries the input whole when another request came between, and answers each from its own payload', async () => {
    const a = request('a', 10);
    const b = request('b', 20);
    posted.length = 0;
    assert.deepEqual(await item(a, 0), { text: '0:a:1:a:a:/hooks/a:10' });
    assert.deepEqual(await item(b, 0), { text: '0:b:1:b:b:/hooks/b:20' });
    assert.deepEqual(await item(a, 1), { text: '1:a:1:a:a:/hooks/a:10' });
    assert.deepEqual(await item(a, 2), { text: '2:a:1:a:a:/hooks/a:10' });
    assert.deepEqual(
      posted.map((c) => ('input' in c ? 'whole' : 'shared')),
      ['whole', 'whole', 'whole', 'shared'],
    );
  });

  it('calls without an item (no forEach) always carry their input whole', async () => {
    const a = request('a', 10);
    posted.length = 0;
    await run(spec('count.js'), a);
    await run(spec('count.js'), a);
    assert.deepEqual(
      posted.map((c) => ('input' in c ? (c.keep ?? 'whole') : 'shared')),
      ['whole', 'whole'],
    );
  });

  it('carries the input whole again to the process that replaced one that timed out', async () => {
    const a = request('a', 10);
    assert.deepEqual(await item(a, 0), { text: '0:a:1:a:a:/hooks/a:10' });
    await assert.rejects(run(spec('stuck.js', 300), { ...a, item: { n: 1 } }), /timed out/);
    posted.length = 0;
    assert.deepEqual(await item(a, 2), { text: '2:a:1:a:a:/hooks/a:10' });
    assert.ok('input' in posted[0]!, 'the new process keeps nothing yet');
  });
});
