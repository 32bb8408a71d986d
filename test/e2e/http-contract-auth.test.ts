/**
 * The HTTP contract of DESIGN §3, authentication: a token in the query string (step 2), the
 * brute-force lockout (step 3) and token checks (step 4), against the real server started in this
 * process on port 0.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { assertError } from '../helpers/assert-response.js';
import { post, send } from '../helpers/http-client.js';
import { startTestGateway, type TestGateway } from '../helpers/in-process-gateway.js';
import { baseConfig, HOOK_TOKEN, type ConfigDoc } from '../helpers/temp-config.js';
import { MAIN_CONFIG, withGateway } from './http-contract-setup.js';

const LOCKOUT = { maxFailures: 3, windowSeconds: 60, lockoutSeconds: 60 };

function lockoutConfig(gateway: Record<string, unknown> = {}): ConfigDoc {
  return baseConfig({ hooks: { enabled: true, token: HOOK_TOKEN, authRateLimit: LOCKOUT }, gateway: { ...gateway } });
}

describe('HTTP contract', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startTestGateway(MAIN_CONFIG);
  });
  after(async () => {
    await gw?.stop();
  });

  describe('token in the query string (step 2)', () => {
    const cases: Array<[string, string]> = [
      ['an empty token', '/hooks/wake?token='],
      ['the correct token', `/hooks/wake?token=${HOOK_TOKEN}`],
      ['a wrong token', '/hooks/agent?token=nope'],
      ['a token after other parameters', '/hooks/wake?a=1&token=x'],
      ['a bare token parameter', '/hooks/agent?token'],
    ];
    for (const [what, path] of cases) {
      it(`returns 400 token_in_query for ${what}, even with a correct header`, async () => {
        const res = await post(gw.port, path, { text: 'x', message: 'x' });
        assertError(res, 400, 'token_in_query');
      });
    }

    it('does not store anything when the query carries a token', async () => {
      await post(gw.port, `/hooks/wake?token=${HOOK_TOKEN}`, { text: 'query token 5c1e' });
      const events = await gw.gateway.store.listSystemEvents({ limit: 10_000 });
      assert.equal(events.filter((e) => e.text.includes('query token 5c1e')).length, 0);
    });
  });

  describe('authentication (step 4)', () => {
    it('returns 401 when the token is missing', async () => {
      assertError(await post(gw.port, '/hooks/wake', { text: 'x' }, { auth: false }), 401, 'unauthorized');
    });

    it('returns 401 for a wrong Bearer token and does not echo it', async () => {
      const res = await post(gw.port, '/hooks/wake', { text: 'x' }, { auth: 'wrong-token-7d1f' });
      assertError(res, 401, 'unauthorized');
      assert.ok(!res.text.includes('wrong-token-7d1f'));
    });

    it('returns 401 for a token that is a prefix of the real one', async () => {
      assertError(
        await post(gw.port, '/hooks/wake', { text: 'x' }, { auth: HOOK_TOKEN.slice(0, -1) }),
        401,
        'unauthorized',
      );
    });

    it('returns 401 for Basic authentication, even carrying the right token', async () => {
      for (const credentials of [HOOK_TOKEN, Buffer.from(`user:${HOOK_TOKEN}`).toString('base64')]) {
        const res = await post(
          gw.port,
          '/hooks/wake',
          { text: 'x' },
          {
            auth: false,
            headers: { authorization: `Basic ${credentials}` },
          },
        );
        assertError(res, 401, 'unauthorized');
      }
    });

    it('returns 401 for an empty Bearer value', async () => {
      const res = await post(
        gw.port,
        '/hooks/wake',
        { text: 'x' },
        { auth: false, headers: { authorization: 'Bearer ' } },
      );
      assertError(res, 401, 'unauthorized');
    });

    it('returns 401 for a wrong token in x-hookgate-token', async () => {
      const res = await post(
        gw.port,
        '/hooks/agent',
        { message: 'x' },
        { auth: false, headers: { 'x-hookgate-token': 'nope' } },
      );
      assertError(res, 401, 'unauthorized');
    });

    const carriers: Array<[string, Record<string, string>]> = [
      ['Authorization: Bearer', { authorization: `Bearer ${HOOK_TOKEN}` }],
      ['Authorization: bearer (any case)', { authorization: `bearer ${HOOK_TOKEN}` }],
      ['x-hookgate-token', { 'x-hookgate-token': HOOK_TOKEN }],
      ['x-openclaw-token', { 'x-openclaw-token': HOOK_TOKEN }],
    ];
    for (const [name, headers] of carriers) {
      it(`accepts the token in ${name}`, async () => {
        const wake = await post(gw.port, '/hooks/wake', { text: `via ${name}` }, { auth: false, headers });
        assert.equal(wake.status, 200, wake.text);
        const agent = await post(gw.port, '/hooks/agent', { message: `via ${name}` }, { auth: false, headers });
        assert.equal(agent.status, 202, agent.text);
      });
    }
  });
});

describe('HTTP contract: brute-force lockout (step 3)', () => {
  const wrong = { auth: 'wrong-token' } as const;

  it('returns 401 for the first failures and 429 with Retry-After once locked out', async () => {
    await withGateway(lockoutConfig(), async (g) => {
      for (let i = 0; i < LOCKOUT.maxFailures; i++) {
        assertError(await post(g.port, '/hooks/wake', { text: 'x' }, wrong), 401, 'unauthorized');
      }
      const res = await post(g.port, '/hooks/wake', { text: 'x' }, wrong);
      assertError(res, 429, 'rate_limited');
      const retryAfter = Number(res.headers['retry-after']);
      assert.ok(
        Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= LOCKOUT.lockoutSeconds,
        `Retry-After ${res.headers['retry-after']}`,
      );
    });
  });

  it('returns 429 to a locked-out client even with the correct token, and stores nothing', async () => {
    await withGateway(lockoutConfig(), async (g) => {
      for (let i = 0; i < LOCKOUT.maxFailures; i++) await post(g.port, '/hooks/wake', { text: 'x' }, wrong);
      const wake = await post(g.port, '/hooks/wake', { text: 'correct token while locked' });
      assertError(wake, 429, 'rate_limited');
      assert.ok(wake.headers['retry-after'] !== undefined);
      assertError(await post(g.port, '/hooks/agent', { message: 'm' }), 429, 'rate_limited');
      assertError(
        await post(g.port, '/hooks/wake', { text: 'x' }, { auth: false, headers: { 'x-hookgate-token': HOOK_TOKEN } }),
        429,
        'rate_limited',
      );
      assert.equal((await g.gateway.store.listSystemEvents()).length, 0);
      assert.equal((await g.gateway.store.listRuns()).length, 0);
    });
  });

  it('answers 405 before 429: the method is checked before the lockout', async () => {
    await withGateway(lockoutConfig(), async (g) => {
      for (let i = 0; i < LOCKOUT.maxFailures; i++) await post(g.port, '/hooks/wake', { text: 'x' }, wrong);
      assertError(await send(g.port, '/hooks/wake', { method: 'GET' }), 405, 'method_not_allowed');
    });
  });

  it('counts missing tokens as failures', async () => {
    await withGateway(lockoutConfig(), async (g) => {
      for (let i = 0; i < LOCKOUT.maxFailures; i++) await post(g.port, '/hooks/wake', { text: 'x' }, { auth: false });
      assertError(await post(g.port, '/hooks/wake', { text: 'x' }), 429, 'rate_limited');
    });
  });

  it('does not count a token in the query string as an authentication failure', async () => {
    await withGateway(lockoutConfig(), async (g) => {
      for (let i = 0; i < LOCKOUT.maxFailures * 3; i++) {
        assertError(
          await post(g.port, '/hooks/wake?token=wrong', { text: 'x' }, { auth: false }),
          400,
          'token_in_query',
        );
      }
      const res = await post(g.port, '/hooks/wake', { text: 'still allowed' });
      assert.equal(res.status, 200, res.text);
    });
  });

  it('keeps answering 400 token_in_query to a locked-out client (step 2 precedes step 3)', async () => {
    await withGateway(lockoutConfig(), async (g) => {
      for (let i = 0; i < LOCKOUT.maxFailures; i++) await post(g.port, '/hooks/wake', { text: 'x' }, wrong);
      assertError(await post(g.port, '/hooks/wake?token=x', { text: 'x' }), 400, 'token_in_query');
    });
  });

  describe('behind a trusted proxy', () => {
    const trusted = (): ConfigDoc => lockoutConfig({ trustedProxies: ['127.0.0.1'], logLevel: 'warn' });
    const from = (xff: string, auth: string | boolean = true) => ({ auth, headers: { 'x-forwarded-for': xff } });

    it('locks out the forwarded client address, not the proxy or other clients', async () => {
      await withGateway(trusted(), async (g) => {
        for (let i = 0; i < LOCKOUT.maxFailures; i++) {
          assertError(
            await post(g.port, '/hooks/wake', { text: 'x' }, from('203.0.113.7', 'wrong')),
            401,
            'unauthorized',
          );
        }
        assertError(await post(g.port, '/hooks/wake', { text: 'x' }, from('203.0.113.7')), 429, 'rate_limited');
        const other = await post(g.port, '/hooks/wake', { text: 'other client' }, from('203.0.113.8'));
        assert.equal(other.status, 200, other.text);
        const direct = await post(g.port, '/hooks/wake', { text: 'proxy itself' });
        assert.equal(direct.status, 200, direct.text);
      });
    });

    it('accounts to the right-most untrusted hop, so a spoofed left hop does not escape', async () => {
      await withGateway(trusted(), async (g) => {
        for (let i = 0; i < LOCKOUT.maxFailures; i++)
          await post(g.port, '/hooks/wake', { text: 'x' }, from('203.0.113.7', 'wrong'));
        assertError(
          await post(g.port, '/hooks/wake', { text: 'x' }, from('198.51.100.1, 203.0.113.7')),
          429,
          'rate_limited',
        );
        assertError(
          await post(g.port, '/hooks/wake', { text: 'x' }, from('203.0.113.7, 127.0.0.1')),
          429,
          'rate_limited',
        );
      });
    });

    it('trusts a proxy given as a CIDR range', async () => {
      await withGateway(lockoutConfig({ trustedProxies: ['127.0.0.0/8'], logLevel: 'warn' }), async (g) => {
        for (let i = 0; i < LOCKOUT.maxFailures; i++)
          await post(g.port, '/hooks/wake', { text: 'x' }, from('203.0.113.7', 'wrong'));
        assertError(await post(g.port, '/hooks/wake', { text: 'x' }, from('203.0.113.7')), 429, 'rate_limited');
        const other = await post(g.port, '/hooks/wake', { text: 'other client' }, from('203.0.113.8'));
        assert.equal(other.status, 200, other.text);
      });
    });

    it('folds an IPv4-mapped IPv6 forwarded address onto its IPv4 form', async () => {
      await withGateway(trusted(), async (g) => {
        for (let i = 0; i < LOCKOUT.maxFailures; i++)
          await post(g.port, '/hooks/wake', { text: 'x' }, from('::ffff:203.0.113.9', 'wrong'));
        assertError(await post(g.port, '/hooks/wake', { text: 'x' }, from('203.0.113.9')), 429, 'rate_limited');
      });
    });

    it('counts every address of an IPv6 /64 as one client, so stepping through the block does not escape', async () => {
      await withGateway(trusted(), async (g) => {
        for (let i = 0; i < LOCKOUT.maxFailures; i++) {
          assertError(
            await post(g.port, '/hooks/wake', { text: 'x' }, from(`2001:db8:5:6::${i + 1}`, 'wrong')),
            401,
            'unauthorized',
          );
        }
        assertError(
          await post(g.port, '/hooks/wake', { text: 'x' }, from('2001:db8:5:6:ffff::9')),
          429,
          'rate_limited',
        );
        const nextBlock = await post(g.port, '/hooks/wake', { text: 'next /64' }, from('2001:db8:5:7::1'));
        assert.equal(nextBlock.status, 200, nextBlock.text);
      });
    });
  });

  describe('without a trusted proxy', () => {
    it('ignores X-Forwarded-For and locks out the socket address', async () => {
      await withGateway(lockoutConfig(), async (g) => {
        for (let i = 0; i < LOCKOUT.maxFailures; i++) {
          await post(
            g.port,
            '/hooks/wake',
            { text: 'x' },
            { auth: 'wrong', headers: { 'x-forwarded-for': '203.0.113.7' } },
          );
        }
        const res = await post(
          g.port,
          '/hooks/wake',
          { text: 'x' },
          { headers: { 'x-forwarded-for': '203.0.113.99' } },
        );
        assertError(res, 429, 'rate_limited');
      });
    });
  });
});

describe('HTTP contract: lockout expiry', () => {
  it('lets the client in again once lockoutSeconds have passed', async () => {
    const config = baseConfig({
      hooks: {
        enabled: true,
        token: HOOK_TOKEN,
        authRateLimit: { maxFailures: 2, windowSeconds: 60, lockoutSeconds: 1 },
      },
    });
    await withGateway(config, async (g) => {
      for (let i = 0; i < 2; i++) await post(g.port, '/hooks/wake', { text: 'x' }, { auth: 'wrong' });
      const locked = await post(g.port, '/hooks/wake', { text: 'x' });
      assertError(locked, 429, 'rate_limited');
      assert.equal(locked.headers['retry-after'], '1');
      // Wait well past the 1 s lockout (only a lower bound on time is relied on).
      await new Promise((r) => setTimeout(r, 2_200));
      const res = await post(g.port, '/hooks/wake', { text: 'after the lockout' });
      assert.equal(res.status, 200, res.text);
    });
  });
});
