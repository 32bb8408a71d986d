/**
 * A reload applies what the ingress alone uses (hooks, channels, budgets) and leaves what the runtime
 * read at startup (agents, models) to the next start: the ingress never accepts a run for a model or
 * an agent the runtime does not have yet.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { readConfig } from '../../src/config/index.js';
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
