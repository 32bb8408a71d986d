/**
 * The HTTP contract of DESIGN §3, configuration of the hooks endpoint: `hooks.enabled` and
 * `hooks.path`, each against its own server started in this process on port 0.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { assertError } from '../helpers/assert-response.js';
import { post, send } from '../helpers/http-client.js';
import { baseConfig, HOOK_TOKEN } from '../helpers/temp-config.js';
import { assertHealthy, withGateway } from './http-contract-setup.js';

describe('HTTP contract: configuration of the hooks endpoint', () => {
  it('returns 404 on every hook path when hooks are disabled', async () => {
    const config = baseConfig({});
    config['hooks'] = { enabled: false };
    await withGateway(config, async (g) => {
      assertError(await post(g.port, '/hooks/wake', { text: 'x' }), 404, 'not_found');
      assertError(await post(g.port, '/hooks/agent', { message: 'x' }), 404, 'not_found');
      await assertHealthy(g.port);
    });
  });

  it('serves hooks under a multi-segment hooks.path', async () => {
    await withGateway(baseConfig({ hooks: { enabled: true, token: HOOK_TOKEN, path: '/api/v1/hooks' } }), async (g) => {
      const wake = await post(g.port, '/api/v1/hooks/wake', { text: 'nested base' });
      assert.equal(wake.status, 200, wake.text);
      assertError(await post(g.port, '/api/v1/wake', { text: 'x' }), 404, 'not_found');
    });
  });

  it('serves hooks under a configured hooks.path (trailing slash in config tolerated)', async () => {
    await withGateway(baseConfig({ hooks: { enabled: true, token: HOOK_TOKEN, path: '/ingress/' } }), async (g) => {
      const wake = await post(g.port, '/ingress/wake', { text: 'custom base' });
      assert.equal(wake.status, 200, wake.text);
      const agent = await post(g.port, '/ingress/agent', { message: 'custom base' });
      assert.equal(agent.status, 202, agent.text);
      assertError(await post(g.port, '/hooks/wake', { text: 'x' }), 404, 'not_found');
      assertError(await send(g.port, '/ingress/wake', { method: 'GET' }), 405, 'method_not_allowed');
    });
  });
});
