/**
 * A reload applies what the ingress alone uses (hooks, channels, budgets) and the model providers
 * (rebuilt for the runtime too), and leaves the agents the runtime read at startup to the next
 * start: the ingress never accepts a run for a model or an agent the runtime does not have yet.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { readConfig } from '../../src/config/index.js';
import { createFakeOpenAi } from '../fakes/fake-openai.js';
import { assertError } from '../helpers/assert-response.js';
import { post } from '../helpers/http-client.js';
import { startTestGateway, type TestGateway } from '../helpers/in-process-gateway.js';
import { baseConfig, type ConfigDoc } from '../helpers/temp-config.js';

describe('config reload', () => {
  let gw: TestGateway;
  const config = (o: { alias?: boolean; agent?: boolean; allowNewHook?: boolean }): ConfigDoc =>
    baseConfig({
      agents: {
        defaults: {
          model: 'echo/echo',
          models: { 'echo/echo': {}, ...(o.alias ? { 'echo/second': { alias: 'second' } } : {}) },
        },
        list: [{ id: 'main', default: true }, ...(o.agent ? [{ id: 'ops' }] : [])],
      },
      hooks: {
        mappings: o.allowNewHook
          ? [{ id: 'fresh', match: { path: 'fresh' }, action: 'wake', wakeMode: 'next-heartbeat' }]
          : [],
      },
    });
  const reload = (doc: ConfigDoc): string[] => {
    writeFileSync(gw.temp.path, JSON.stringify(doc));
    return gw.gateway.reload(readConfig(gw.temp.path, {}));
  };
  before(async () => {
    gw = await startTestGateway(config({}));
  });
  after(() => gw.stop());

  it('applies a new mapping at once', async () => {
    assertError(await post(gw.port, '/hooks/fresh', { text: 'x' }), 404, 'hook_not_found');
    assert.deepEqual(reload(config({ allowNewHook: true })), []);
    assert.equal((await post(gw.port, '/hooks/fresh', { text: 'x' })).status, 200);
  });

  it('leaves a model added to the allow-list, and a new agent, to the next start, and says so', async () => {
    assert.deepEqual(reload(config({ allowNewHook: true, alias: true, agent: true })), ['agents']);
    assertError(
      await post(gw.port, '/hooks/agent', { message: 'hi', model: 'echo/second', deliver: false }),
      400,
      'model_not_allowed',
    );
    // An agent id the running config does not list goes to its default agent, as before the reload.
    const run = await post(gw.port, '/hooks/agent', { message: 'hi', agentId: 'ops', deliver: false });
    assert.equal(run.status, 202, run.text);
    assert.equal((await gw.gateway.store.getRun((run.json as { runId: string }).runId))?.agentId, 'main');
  });
});

describe('config reload of model providers', () => {
  const doc = (providers: Record<string, unknown>): ConfigDoc =>
    baseConfig({
      models: { providers },
      agents: { defaults: { model: 'echo/echo', heartbeat: { every: 0 } }, list: [{ id: 'main', default: true }] },
    });

  it('serves the next run on a provider the reload added, without a restart', async () => {
    const openai = await createFakeOpenAi({ apiKey: 'sk-fresh', reply: () => 'fresh answer' });
    const gw = await startTestGateway(doc({}));
    try {
      const ask = { message: 'hi', model: 'fresh/gpt-test', deliver: false };
      const refused = await post(gw.port, '/hooks/agent', ask);
      assert.equal(refused.status, 400, refused.text);
      writeFileSync(
        gw.temp.path,
        JSON.stringify(doc({ fresh: { api: 'openai', baseUrl: `${openai.url}/v1`, apiKey: 'sk-fresh' } })),
      );
      assert.deepEqual(gw.gateway.reload(readConfig(gw.temp.path, {})), []);
      const res = await post(gw.port, '/hooks/agent', ask);
      assert.equal(res.status, 202, res.text);
      const runId = (res.json as { runId: string }).runId;
      let run = await gw.gateway.store.getRun(runId);
      for (let i = 0; i < 200 && (run?.state === 'queued' || run?.state === 'running'); i++) {
        await new Promise((r) => setTimeout(r, 25));
        run = await gw.gateway.store.getRun(runId);
      }
      assert.equal(run?.state, 'succeeded', JSON.stringify(run));
      assert.equal(run?.model, 'fresh/gpt-test');
      assert.equal(openai.requests.filter((r) => r.path === '/v1/chat/completions').length, 1);
    } finally {
      await gw.stop();
      await openai.close();
    }
  });
});
