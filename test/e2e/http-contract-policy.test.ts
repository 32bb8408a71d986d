/**
 * The HTTP contract of DESIGN §3, agent policy (step 8): allowed agent ids, session keys and
 * models, against the real server started in this process on port 0.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { assertInvalidField } from '../helpers/assert-response.js';
import { post } from '../helpers/http-client.js';
import { startTestGateway, type TestGateway } from '../helpers/in-process-gateway.js';
import { baseConfig, HOOK_TOKEN } from '../helpers/temp-config.js';
import { acceptedRun, AGENTS, findRun, HOOK_UUID_KEY, MAIN_CONFIG, withGateway } from './http-contract-setup.js';
import { until } from './mapped-hooks-harness.js';

describe('HTTP contract', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startTestGateway(MAIN_CONFIG);
  });
  after(async () => {
    await gw?.stop();
  });

  describe('agent policy: allowedAgentIds', () => {
    it('allows any agentId when allowedAgentIds is omitted', async () => {
      assert.equal((await acceptedRun(gw, { message: 'm', agentId: 'ops' })).agentId, 'ops');
      assert.equal((await acceptedRun(gw, { message: 'm', agentId: 'main' })).agentId, 'main');
    });

    it('routes an unknown agentId to the default agent', async () => {
      assert.equal((await acceptedRun(gw, { message: 'm', agentId: 'ghost' })).agentId, 'main');
    });

    it('allows any agentId when allowedAgentIds holds "*"', async () => {
      await withGateway(
        baseConfig({ hooks: { enabled: true, token: HOOK_TOKEN, allowedAgentIds: ['*'] }, agents: AGENTS }),
        async (g) => {
          assert.equal((await acceptedRun(g, { message: 'm', agentId: 'ops' })).agentId, 'ops');
          assert.equal((await acceptedRun(g, { message: 'm', agentId: 'ghost' })).agentId, 'main');
        },
      );
    });

    it('denies every explicit agentId with 400 agent_not_allowed when allowedAgentIds is []', async () => {
      await withGateway(
        baseConfig({ hooks: { enabled: true, token: HOOK_TOKEN, allowedAgentIds: [] }, agents: AGENTS }),
        async (g) => {
          for (const agentId of ['main', 'ops', 'ghost']) {
            assertInvalidField(
              await post(g.port, '/hooks/agent', { message: 'm', agentId }),
              'agentId',
              'agent_not_allowed',
            );
          }
          assert.equal((await g.gateway.store.listRuns()).length, 0, 'nothing stored');
        },
      );
    });

    it('still accepts a run without agentId when allowedAgentIds is []', async () => {
      await withGateway(
        baseConfig({ hooks: { enabled: true, token: HOOK_TOKEN, allowedAgentIds: [] }, agents: AGENTS }),
        async (g) => {
          assert.equal((await acceptedRun(g, { message: 'm' })).agentId, 'main');
        },
      );
    });

    it('checks the resolved agent against a list', async () => {
      await withGateway(
        baseConfig({ hooks: { enabled: true, token: HOOK_TOKEN, allowedAgentIds: ['ops'] }, agents: AGENTS }),
        async (g) => {
          assert.equal((await acceptedRun(g, { message: 'm', agentId: 'ops' })).agentId, 'ops');
          assertInvalidField(
            await post(g.port, '/hooks/agent', { message: 'm', agentId: 'main' }),
            'agentId',
            'agent_not_allowed',
          );
          // Unknown → default agent `main`, which is not on the list.
          assertInvalidField(
            await post(g.port, '/hooks/agent', { message: 'm', agentId: 'ghost' }),
            'agentId',
            'agent_not_allowed',
          );
        },
      );
    });

    it('allows an unknown agentId when the default agent it falls back to is permitted', async () => {
      await withGateway(
        baseConfig({ hooks: { enabled: true, token: HOOK_TOKEN, allowedAgentIds: ['main'] }, agents: AGENTS }),
        async (g) => {
          assert.equal((await acceptedRun(g, { message: 'm', agentId: 'ghost' })).agentId, 'main');
          assertInvalidField(
            await post(g.port, '/hooks/agent', { message: 'm', agentId: 'ops' }),
            'agentId',
            'agent_not_allowed',
          );
        },
      );
    });
  });

  describe('agent policy: sessionKey', () => {
    it('rejects a request sessionKey with 400 session_key_not_allowed unless allowRequestSessionKey', async () => {
      assertInvalidField(
        await post(gw.port, '/hooks/agent', { message: 'm', sessionKey: 'hook:mine' }),
        'sessionKey',
        'session_key_not_allowed',
      );
    });

    it('generates a fresh hook:<uuid> session key per run when none is configured', async () => {
      const a = await acceptedRun(gw, { message: 'm' });
      const b = await acceptedRun(gw, { message: 'm' });
      assert.match(a.sessionKey, HOOK_UUID_KEY);
      assert.match(b.sessionKey, HOOK_UUID_KEY);
      assert.notEqual(a.sessionKey, b.sessionKey);
    });

    const SESSION_CONFIG = baseConfig({
      hooks: {
        enabled: true,
        token: HOOK_TOKEN,
        allowRequestSessionKey: true,
        allowedSessionKeyPrefixes: ['hook:', 'ops:'],
        defaultSessionKey: 'hook:default',
      },
      agents: AGENTS,
    });

    it('accepts a request sessionKey that matches an allowed prefix when overrides are on', async () => {
      await withGateway(SESSION_CONFIG, async (g) => {
        assert.equal((await acceptedRun(g, { message: 'm', sessionKey: 'ops:deploys' })).sessionKey, 'ops:deploys');
        assert.equal((await acceptedRun(g, { message: 'm', sessionKey: 'hook:x' })).sessionKey, 'hook:x');
      });
    });

    it('rejects a request sessionKey outside the allowed prefixes', async () => {
      await withGateway(SESSION_CONFIG, async (g) => {
        for (const sessionKey of ['agent:main:main', 'evil:1', 'HOOK:x', 'xhook:1']) {
          assertInvalidField(
            await post(g.port, '/hooks/agent', { message: 'm', sessionKey }),
            'sessionKey',
            'session_key_not_allowed',
          );
        }
      });
    });

    it('uses hooks.defaultSessionKey when the request has none', async () => {
      await withGateway(SESSION_CONFIG, async (g) => {
        assert.equal((await acceptedRun(g, { message: 'm' })).sessionKey, 'hook:default');
      });
    });

    it('uses hooks.defaultSessionKey with request overrides off', async () => {
      const config = baseConfig({
        hooks: { enabled: true, token: HOOK_TOKEN, defaultSessionKey: 'hook:fixed' },
        agents: AGENTS,
      });
      await withGateway(config, async (g) => {
        assert.equal((await acceptedRun(g, { message: 'm' })).sessionKey, 'hook:fixed');
        assertInvalidField(
          await post(g.port, '/hooks/agent', { message: 'm', sessionKey: 'hook:fixed' }),
          'sessionKey',
          'session_key_not_allowed',
        );
      });
    });

    it('accepts any request sessionKey when overrides are on and no prefixes are set', async () => {
      const config = baseConfig({
        hooks: { enabled: true, token: HOOK_TOKEN, allowRequestSessionKey: true },
        agents: AGENTS,
      });
      await withGateway(config, async (g) => {
        assert.equal((await acceptedRun(g, { message: 'm', sessionKey: 'anything:1' })).sessionKey, 'anything:1');
      });
    });
  });

  describe('agent policy: model', () => {
    it('resolves an alias from agents.defaults.models and stores the model ref', async () => {
      assert.equal((await acceptedRun(gw, { message: 'm', model: 'small' })).model, 'echo/small');
    });

    it('runs a run that names no model on the default model, to success', async () => {
      const run = await acceptedRun(gw, { message: 'm' });
      assert.equal(run.model, null, 'no override stored');
      await until(
        async () => !['queued', 'running'].includes((await findRun(gw, run.id))?.state ?? 'queued'),
        'the run to finish',
      );
      const done = await findRun(gw, run.id);
      assert.equal(done?.state, 'succeeded', done?.error ?? '');
      assert.equal(done?.modelUsed, 'echo/small');
    });

    it('accepts a listed model ref as is', async () => {
      assert.equal((await acceptedRun(gw, { message: 'm', model: 'echo/big' })).model, 'echo/big');
    });

    it('returns 400 model_not_allowed for a model outside the restricted list', async () => {
      for (const model of ['echo/other', 'openai/gpt-4o']) {
        assertInvalidField(await post(gw.port, '/hooks/agent', { message: 'm', model }), 'model', 'model_not_allowed');
      }
    });

    it('returns 400 naming model for a value that is neither a ref nor an alias', async () => {
      const res = await post(gw.port, '/hooks/agent', { message: 'm', model: 'tiny' });
      assert.equal(res.status, 400, res.text);
      assert.ok(
        (res.json as { issues?: Array<{ path: string }> }).issues?.some((i) => i.path === 'model'),
        res.text,
      );
    });

    it('accepts any echo model when the list is not restricted', async () => {
      await withGateway(baseConfig({ agents: AGENTS }), async (g) => {
        assert.equal((await acceptedRun(g, { message: 'm', model: 'echo/whatever' })).model, 'echo/whatever');
      });
    });
  });
});
