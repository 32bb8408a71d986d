/**
 * `waitForCompletion`: the caller gets the run's outcome (a category, never model text unless the
 * mapping sets `returnReply`), a wait past `hooks.maxWaitSeconds` answers with the run still under
 * way, and a caller that hangs up does not cancel the run.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { createFakeOpenAi } from '../fakes/fake-openai.js';
import type { FakeServer } from '../fakes/create-fake-server.js';
import type { RunRecord } from '../../src/store/index.js';
import { send, type HttpResult } from '../helpers/http-client.js';
import { startTestGateway, type TestGateway } from '../helpers/in-process-gateway.js';
import { baseConfig, HOOK_TOKEN } from '../helpers/temp-config.js';

const j = (r: HttpResult): Record<string, unknown> => (r.json ?? {}) as Record<string, unknown>;

describe('waitForCompletion', () => {
  let slow: FakeServer;
  let gw: TestGateway;
  before(async () => {
    slow = await createFakeOpenAi({ apiKey: 'sk', reply: () => 'slow answer', delayMs: 2500 });
    gw = await startTestGateway(
      baseConfig({
        models: { providers: { slow: { api: 'openai', baseUrl: `${slow.url}/v1`, apiKey: 'sk' } } },
        agents: { list: [{ id: 'main', default: true }], defaults: { heartbeat: { every: 0 }, maxConcurrentRuns: 8 } },
        hooks: {
          maxWaitSeconds: 1,
          mappings: [
            {
              id: 'ask',
              match: { path: 'ask' },
              action: 'agent',
              messageTemplate: 'Q: {{q}}',
              deliver: false,
              waitForCompletion: true,
              returnReply: true,
            },
          ],
        },
      }),
    );
  });
  after(async () => {
    await gw.stop();
    await slow.close();
  });

  it('answers with the outcome of an echo run, without its text', async () => {
    const res = await send(gw.port, '/hooks/agent', {
      body: { message: 'hello', deliver: false, waitForCompletion: true },
    });
    assert.equal(res.status, 200);
    assert.equal(j(res)['ok'], true);
    assert.equal(j(res)['status'], 'succeeded');
    assert.equal(j(res)['delivered'], false);
    assert.equal(typeof j(res)['runId'], 'string');
    assert.equal(j(res)['reply'], undefined, 'no model text unless the mapping asks');
  });

  it('carries the reply when the mapping sets returnReply', async () => {
    const res = await send(gw.port, '/hooks/ask', { body: { q: 'what time is it' } });
    assert.equal(res.status, 200);
    assert.equal(j(res)['status'], 'succeeded');
    assert.match(String(j(res)['reply']), /\[offline echo model\].*what time is it/);
  });

  it('stops waiting at hooks.maxWaitSeconds with the run still going, and the run ends anyway', async () => {
    const started = Date.now();
    const res = await send(gw.port, '/hooks/agent', {
      body: { message: 'slow one', model: 'slow/m', deliver: false, waitForCompletion: true },
    });
    assert.ok(Date.now() - started < 2400, 'answered before the model did');
    assert.deepEqual([res.status, j(res)['ok'], j(res)['error']], [200, false, 'wait_timeout']);
    assert.ok(['queued', 'running'].includes(String(j(res)['status'])));
    const id = String(j(res)['runId']);
    for (let i = 0; i < 200 && (await gw.gateway.store.getRun(id))?.state !== 'succeeded'; i++) await sleep(25);
    assert.equal((await gw.gateway.store.getRun(id))?.state, 'succeeded');
  });

  it('does not cancel the run when the caller hangs up', async () => {
    const body = JSON.stringify({
      message: 'caller leaves',
      name: 'leaver',
      model: 'slow/m',
      deliver: false,
      waitForCompletion: true,
    });
    await new Promise<void>((resolve) => {
      const req = request({
        host: '127.0.0.1',
        port: gw.port,
        path: '/hooks/agent',
        method: 'POST',
        agent: false,
        headers: {
          authorization: `Bearer ${HOOK_TOKEN}`,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
        },
      });
      req.on('error', () => resolve());
      req.end(body);
      setTimeout(() => {
        req.destroy();
        resolve();
      }, 300);
    });
    let run: RunRecord | undefined;
    for (let i = 0; i < 200; i++) {
      run = (await gw.gateway.store.listRuns({ limit: 50 })).find((r) => r.name === 'leaver');
      if (run?.state === 'succeeded') break;
      await sleep(25);
    }
    assert.equal(run?.state, 'succeeded');
  });
});
