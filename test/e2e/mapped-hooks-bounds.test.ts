/**
 * Transforms cannot take the gateway down: a transform piling up buffers is ended while other
 * hooks keep answering, a stuck transform fails only its own calls, and `process.kill` of the
 * gateway from a transform is refused while the gateway keeps serving.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { assertError } from '../helpers/assert-response.js';
import { post, send, type HttpResult } from '../helpers/http-client.js';
import { baseConfig, HOOK_TOKEN } from '../helpers/temp-config.js';
import { startMappedGateway, type MappedGateway } from './mapped-hooks-harness.js';

const TRANSFORMS: Record<string, string> = {
  // The shape that took the whole gateway to 1 GB before the kernel killed it.
  'hog.js': 'export default () => { const keep = []; for (;;) keep.push(Buffer.allocUnsafe(1 << 20)); };',
  'stuck.js': 'export default () => { for (;;) {} };',
  'killer.js': 'export default () => { process.kill(process.pid, "SIGKILL"); return { message: "survived?" }; };',
  'fast.js': 'export default (input) => ({ text: `fast ${input.payload.n}` });',
  'inflate.js': 'export default () => ({ text: "x".repeat(8192) });',
};

function wakeMapping(id: string, module: string, transform: Record<string, unknown> = {}): Record<string, unknown> {
  return { id, match: { path: id }, action: 'wake', wakeMode: 'next-heartbeat', transform: { module, ...transform } };
}

/** Posts to `fast` until `done` settles (at least three times); every answer must be a 200. */
async function keepCallingFast(port: number, done: Promise<unknown>): Promise<number> {
  let settled = false;
  void done.then(
    () => (settled = true),
    () => (settled = true),
  );
  let answered = 0;
  while (!settled || answered < 3) {
    const res = await post(port, '/hooks/fast', { n: answered });
    assert.equal(res.status, 200, res.text);
    answered++;
  }
  return answered;
}

describe('mapped hooks: transforms cannot take the gateway down', () => {
  let gw: MappedGateway;
  before(async () => {
    gw = await startMappedGateway(
      baseConfig({
        hooks: {
          enabled: true,
          token: HOOK_TOKEN,
          maxBodyBytes: 4096,
          mappings: [
            // The timeouts are long: only the memory cap can end the hog in time.
            wakeMapping('hog', 'hog.js', { maxMemoryMb: 32, timeoutMs: 120_000 }),
            wakeMapping('stuck', 'stuck.js', { timeoutMs: 2000 }),
            wakeMapping('killer', 'killer.js'),
            wakeMapping('fast', 'fast.js'),
            wakeMapping('inflate', 'inflate.js'),
          ],
        },
      }),
      { transforms: TRANSFORMS },
    );
  });
  after(() => gw.stop());

  const memoryLine = (): boolean => gw.logLines.some((l) => l.includes('transform.maxMemoryMb'));

  it('ends a transform allocating Buffer.allocUnsafe in a loop, while another hook keeps answering', async () => {
    const hog: Promise<HttpResult> = post(gw.port, '/hooks/hog', { n: 1 }, { timeoutMs: 60_000 });
    const answered = await keepCallingFast(gw.port, hog);
    assertError(await hog, 500, 'transform_failed');
    assert.ok(answered >= 3);
    assert.ok(memoryLine(), 'the log says the memory cap ended it');
  });

  it("fails a stuck transform's own calls only, while another mapping's fast transform keeps answering", async () => {
    const stuck = [post(gw.port, '/hooks/stuck', { n: 1 }), post(gw.port, '/hooks/stuck', { n: 2 })];
    const answered = await keepCallingFast(gw.port, Promise.all(stuck));
    for (const res of await Promise.all(stuck)) assertError(res, 500, 'transform_failed');
    assert.ok(answered >= 3);
  });

  it('refuses process.kill(process.pid, "SIGKILL") from a transform and stays alive', async () => {
    assertError(await post(gw.port, '/hooks/killer', { n: 1 }), 500, 'transform_failed');
    assert.ok(gw.logLines.some((l) => l.includes('process.kill is not available to hook transforms')));
    const health = await send(gw.port, '/healthz', { method: 'GET', auth: false });
    assert.equal(health.status, 200);
    assert.equal((await post(gw.port, '/hooks/fast', { n: 9 })).status, 200);
  });

  it('refuses a transform result larger than hooks.maxBodyBytes', async () => {
    assertError(await post(gw.port, '/hooks/inflate', { n: 1 }), 500, 'transform_failed');
    assert.ok(gw.logLines.some((l) => l.includes('more than the 4096 allowed (hooks.maxBodyBytes)')));
  });
});
