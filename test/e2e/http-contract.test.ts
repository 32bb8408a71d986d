/**
 * The HTTP contract of DESIGN §3 for `/hooks/wake` and `/hooks/agent`, against the real server
 * (started in this process on port 0, with its own temp config dir and SQLite store).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { assertError, assertInvalidField } from '../helpers/assert-response.js';
import { post, rawExchange, send } from '../helpers/http-client.js';
import { sendExpectingContinue, streamBody } from '../helpers/stream-request.js';
import { startTestGateway, type TestGateway } from '../helpers/in-process-gateway.js';
import { baseConfig, HOOK_TOKEN, type ConfigDoc } from '../helpers/temp-config.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const HOOK_UUID_KEY = /^hook:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Agents used by every policy config: `main` (default) and `ops`. */
const AGENTS = { list: [{ id: 'main', default: true }, { id: 'ops' }] };

/** The shared gateway: lockout effectively off so 401 tests cannot lock 127.0.0.1 out. */
const MAIN_CONFIG = baseConfig({
  hooks: {
    enabled: true,
    token: HOOK_TOKEN,
    authRateLimit: { maxFailures: 100_000, windowSeconds: 60, lockoutSeconds: 60 },
  },
  agents: {
    ...AGENTS,
    defaults: { models: { 'echo/small': { alias: 'small' }, 'echo/big': {} } },
  },
});

/** Starts a gateway for one test and always stops it. */
async function withGateway(config: ConfigDoc, fn: (gw: TestGateway) => Promise<void>): Promise<void> {
  const gw = await startTestGateway(config);
  try {
    await fn(gw);
  } finally {
    await gw.stop();
  }
}

async function findEvent(gw: TestGateway, id: string) {
  return (await gw.gateway.store.listSystemEvents({ limit: 10_000 })).find((e) => e.id === id);
}

async function findRun(gw: TestGateway, id: string) {
  return (await gw.gateway.store.listRuns({ limit: 10_000 })).find((r) => r.id === id);
}

/**
 * States a run may be in right after its 202: recorded `queued`, and the runtime may already
 * have claimed (and, with the offline echo model, finished) it before the test reads the store.
 */
const ACCEPTED_STATES = ['queued', 'running', 'succeeded'];

/** Posts an agent payload and returns the stored run (asserting the 202). */
async function acceptedRun(gw: TestGateway, payload: unknown) {
  const res = await post(gw.port, '/hooks/agent', payload);
  assert.equal(res.status, 202, res.text);
  const body = res.json as { ok: boolean; runId: string };
  const run = await findRun(gw, body.runId);
  assert.ok(run, `run ${body.runId} is stored`);
  assert.ok(ACCEPTED_STATES.includes(run.state), `state ${run.state}`);
  return run;
}

async function assertHealthy(port: number): Promise<void> {
  const res = await send(port, '/healthz', { method: 'GET', auth: false });
  assert.equal(res.status, 200, 'the server is still up');
}

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

  describe('health', () => {
    it('answers GET /healthz with 200 without a token', async () => {
      const res = await send(gw.port, '/healthz', { method: 'GET', auth: false });
      assert.equal(res.status, 200);
      assert.deepEqual(res.json, { ok: true });
    });
  });

  describe('method (step 1)', () => {
    for (const path of ['/hooks/wake', '/hooks/agent']) {
      for (const method of ['GET', 'PUT', 'DELETE', 'PATCH']) {
        it(`returns 405 with Allow: POST for ${method} ${path}`, async () => {
          const res = await send(gw.port, path, { method, ...(method === 'PUT' ? { body: { text: 'x' } } : {}) });
          assertError(res, 405, 'method_not_allowed');
          assert.equal(res.headers['allow'], 'POST');
        });
      }
    }

    it('returns 405 before looking at a token in the query string', async () => {
      const res = await send(gw.port, `/hooks/wake?token=${HOOK_TOKEN}`, { method: 'GET' });
      assertError(res, 405, 'method_not_allowed');
    });

    it('returns 405 before looking at the token', async () => {
      const res = await send(gw.port, '/hooks/wake', { method: 'GET', auth: false });
      assertError(res, 405, 'method_not_allowed');
      assert.equal(res.headers['allow'], 'POST');
    });
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
      assertError(await post(gw.port, '/hooks/wake', { text: 'x' }, { auth: HOOK_TOKEN.slice(0, -1) }), 401, 'unauthorized');
    });

    it('returns 401 for Basic authentication, even carrying the right token', async () => {
      for (const credentials of [HOOK_TOKEN, Buffer.from(`user:${HOOK_TOKEN}`).toString('base64')]) {
        const res = await post(gw.port, '/hooks/wake', { text: 'x' }, {
          auth: false,
          headers: { authorization: `Basic ${credentials}` },
        });
        assertError(res, 401, 'unauthorized');
      }
    });

    it('returns 401 for an empty Bearer value', async () => {
      const res = await post(gw.port, '/hooks/wake', { text: 'x' }, { auth: false, headers: { authorization: 'Bearer ' } });
      assertError(res, 401, 'unauthorized');
    });

    it('returns 401 for a wrong token in x-hookgate-token', async () => {
      const res = await post(gw.port, '/hooks/agent', { message: 'x' }, { auth: false, headers: { 'x-hookgate-token': 'nope' } });
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

  describe('Expect: 100-continue (what curl sends for bodies over 1 KiB)', () => {
    it('sends 100 Continue and accepts the body', async () => {
      const res = await sendExpectingContinue(gw.port, '/hooks/wake', JSON.stringify({ text: 'x'.repeat(5_000) }), HOOK_TOKEN);
      assert.equal(res.continued, true);
      assert.equal(res.status, 200, res.text);
    });

    it('answers 401 without inviting the body when the token is wrong', async () => {
      const res = await sendExpectingContinue(gw.port, '/hooks/agent', JSON.stringify({ message: 'm' }), 'wrong');
      assert.equal(res.continued, false);
      assert.equal(res.status, 401, res.text);
      assert.equal((res.json as { code: string }).code, 'unauthorized');
    });
  });

  describe('body size limit (step 5)', () => {
    const FOUR_MB = 4 * 1024 * 1024;

    it('delivers 413 with its JSON body for a declared Content-Length over the limit (4 MB sent)', async () => {
      const { res, clientError } = await streamBody(gw.port, '/hooks/wake', { totalBytes: FOUR_MB, declareLength: true, token: HOOK_TOKEN });
      assertError(res, 413, 'payload_too_large');
      assert.equal(res.headers['connection'], 'close', 'the connection closes after the answer');
      assert.equal(clientError, undefined, `no reset on the client: ${String(clientError)}`);
      await assertHealthy(gw.port);
    });

    it('delivers 413 with its JSON body for a chunked body that grows past the limit (4 MB sent)', async () => {
      const { res, clientError } = await streamBody(gw.port, '/hooks/wake', { totalBytes: FOUR_MB, declareLength: false, token: HOOK_TOKEN });
      assertError(res, 413, 'payload_too_large');
      assert.equal(res.headers['connection'], 'close', 'the connection closes after the answer');
      assert.equal(clientError, undefined, `no reset on the client: ${String(clientError)}`);
      await assertHealthy(gw.port);
    });

    it('answers 413 without inviting the body when the client sends Expect: 100-continue', async () => {
      const result = await sendExpectingContinue(gw.port, '/hooks/wake', 'a'.repeat(FOUR_MB), HOOK_TOKEN);
      assert.equal(result.status, 413, result.text);
      assert.equal((result.json as { code: string }).code, 'payload_too_large');
      assert.equal(result.continued, false, 'the server did not send 100 Continue');
    });

    /** A valid wake body of exactly `bytes` bytes. */
    const wakeOfSize = (bytes: number): string => {
      const frame = '{"text":"padded","pad":""}';
      return `${frame.slice(0, -2)}${'p'.repeat(bytes - frame.length)}"}`;
    };

    it('accepts a body of exactly hooks.maxBodyBytes', async () => {
      const body = wakeOfSize(256 * 1024);
      assert.equal(Buffer.byteLength(body), 256 * 1024);
      const res = await post(gw.port, '/hooks/wake', body);
      assert.equal(res.status, 200, res.text);
    });

    it('returns 413 for a body one byte over hooks.maxBodyBytes', async () => {
      assertError(await post(gw.port, '/hooks/wake', wakeOfSize(256 * 1024 + 1)), 413, 'payload_too_large');
      await assertHealthy(gw.port);
    });
  });

  describe('JSON body (step 7)', () => {
    const malformed: Array<[string, string]> = [
      ['an empty body', ''],
      ['a truncated object', '{"text":'],
      ['plain text', 'wake up'],
      ['a trailing comma', '{"text":"x",}'],
      ['single quotes', "{'text':'x'}"],
    ];
    for (const [what, body] of malformed) {
      it(`returns 400 invalid_json for ${what}`, async () => {
        assertError(await post(gw.port, '/hooks/wake', body), 400, 'invalid_json');
      });
    }

    it('returns 400 invalid_json for bytes that are not UTF-8 JSON', async () => {
      assertError(await post(gw.port, '/hooks/wake', Buffer.from([0x7b, 0xff, 0xfe, 0x7d])), 400, 'invalid_json');
    });

    for (const body of ['[]', 'null', '"str"', '42', 'true', '[{"text":"x"}]']) {
      it(`returns 400 invalid_body for ${body}`, async () => {
        assertError(await post(gw.port, '/hooks/wake', body), 400, 'invalid_body');
        assertError(await post(gw.port, '/hooks/agent', body), 400, 'invalid_body');
      });
    }
  });

  describe('payload validation (step 8)', () => {
    const wakeCases: Array<[string, unknown, string]> = [
      ['text is missing', { mode: 'now' }, 'text'],
      ['text is null', { text: null }, 'text'],
      ['text is not a string', { text: 42 }, 'text'],
      ['text is an object', { text: { a: 1 } }, 'text'],
      ['text is empty', { text: '' }, 'text'],
      ['text is blank', { text: '   ' }, 'text'],
      ['mode is outside the enum', { text: 'x', mode: 'later' }, 'mode'],
      ['mode differs in case', { text: 'x', mode: 'NOW' }, 'mode'],
      ['mode is not a string', { text: 'x', mode: 1 }, 'mode'],
    ];
    for (const [what, payload, path] of wakeCases) {
      it(`wake: returns 400 invalid_payload naming "${path}" when ${what}`, async () => {
        assertInvalidField(await post(gw.port, '/hooks/wake', payload), path);
      });
    }

    const agentCases: Array<[string, unknown, string]> = [
      ['message is missing', { name: 'x' }, 'message'],
      ['message is not a string', { message: ['a'] }, 'message'],
      ['message is empty', { message: '' }, 'message'],
      ['wakeMode is outside the enum', { message: 'm', wakeMode: 'soon' }, 'wakeMode'],
      ['deliver is a string', { message: 'm', deliver: 'true' }, 'deliver'],
      ['deliver is a number', { message: 'm', deliver: 1 }, 'deliver'],
      ['timeoutSeconds is 0', { message: 'm', timeoutSeconds: 0 }, 'timeoutSeconds'],
      ['timeoutSeconds is negative', { message: 'm', timeoutSeconds: -5 }, 'timeoutSeconds'],
      ['timeoutSeconds is a string', { message: 'm', timeoutSeconds: '30' }, 'timeoutSeconds'],
      ['timeoutSeconds is beyond any timer (1e9)', { message: 'm', timeoutSeconds: 1e9 }, 'timeoutSeconds'],
      ['timeoutSeconds is null', { message: 'm', timeoutSeconds: null }, 'timeoutSeconds'],
      ['channel is not in the enum', { message: 'm', channel: 'email' }, 'channel'],
      ['channel differs in case', { message: 'm', channel: 'Slack' }, 'channel'],
      ['thinking is not a known level', { message: 'm', thinking: 'extreme' }, 'thinking'],
      ['thinking is not a string', { message: 'm', thinking: 3 }, 'thinking'],
      ['name is not a string', { message: 'm', name: 5 }, 'name'],
      ['to is not a string', { message: 'm', to: 12345 }, 'to'],
      ['agentId is not a string', { message: 'm', agentId: 1 }, 'agentId'],
      ['model is not a string', { message: 'm', model: {} }, 'model'],
    ];
    for (const [what, payload, path] of agentCases) {
      it(`agent: returns 400 invalid_payload naming "${path}" when ${what}`, async () => {
        assertInvalidField(await post(gw.port, '/hooks/agent', payload), path);
      });
    }

    it('agent: returns 400 naming timeoutSeconds when it overflows to Infinity (1e400)', async () => {
      assertInvalidField(await post(gw.port, '/hooks/agent', '{"message":"m","timeoutSeconds":1e400}'), 'timeoutSeconds');
    });

    it('agent: names every offending field in one answer', async () => {
      const paths = assertInvalidField(
        await post(gw.port, '/hooks/agent', { deliver: 'yes', channel: 'fax', timeoutSeconds: 0 }),
        'message',
      );
      for (const p of ['deliver', 'channel', 'timeoutSeconds']) assert.ok(paths.includes(p), `${p} in ${paths.join(',')}`);
    });

    it('stores nothing for a rejected payload', async () => {
      const before = (await gw.gateway.store.listRuns({ limit: 10_000 })).length;
      await post(gw.port, '/hooks/agent', { message: 'm', channel: 'email' });
      assert.equal((await gw.gateway.store.listRuns({ limit: 10_000 })).length, before);
    });

    it('ignores unknown extra fields', async () => {
      const res = await post(gw.port, '/hooks/wake', { text: 'extra', unknownField: { deep: true } });
      assert.equal(res.status, 200, res.text);
    });
  });

  describe('routing (step 9)', () => {
    it('returns 404 hook_not_found for an unknown hook name (authenticated, valid JSON)', async () => {
      assertError(await post(gw.port, '/hooks/unknown', { text: 'x' }), 404, 'hook_not_found');
    });

    it('treats hook names as case-sensitive', async () => {
      assertError(await post(gw.port, '/hooks/WAKE', { text: 'x' }), 404, 'hook_not_found');
    });

    it('tolerates one trailing slash', async () => {
      const wake = await post(gw.port, '/hooks/wake/', { text: 'trailing slash' });
      assert.equal(wake.status, 200, wake.text);
      const agent = await post(gw.port, '/hooks/agent/', { message: 'trailing slash' });
      assert.equal(agent.status, 202, agent.text);
    });

    it('does not tolerate two trailing slashes', async () => {
      const res = await post(gw.port, '/hooks/wake//', { text: 'x' });
      assert.equal(res.status, 404, res.text);
    });

    for (const path of ['/', '/wake', '/hook/wake', '/hookswake', '/HOOKS/wake', '/api/hooks/wake', '/hooks']) {
      it(`returns 404 for ${path}, outside the hooks prefix`, async () => {
        assertError(await post(gw.port, path, { text: 'x' }), 404, 'not_found');
      });
    }
  });

  describe('wake success', () => {
    it('returns 200 {ok, mode:"now", eventId} and stores the event on the main session', async () => {
      const res = await post(gw.port, '/hooks/wake', { text: 'New email from Alice' });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.headers['content-type'], 'application/json; charset=utf-8');
      const body = res.json as { ok: boolean; mode: string; eventId: string };
      assert.deepEqual(Object.keys(body).sort(), ['eventId', 'mode', 'ok']);
      assert.equal(body.ok, true);
      assert.equal(body.mode, 'now');
      assert.match(body.eventId, UUID);
      const event = await findEvent(gw, body.eventId);
      assert.ok(event, 'event stored');
      assert.equal(event.text, 'New email from Alice');
      assert.equal(event.mode, 'now');
      assert.equal(event.agentId, 'main');
      assert.equal(event.sessionKey, 'agent:main:main');
      assert.ok(!res.text.includes(HOOK_TOKEN));
    });

    it('returns mode "next-heartbeat" when asked and stores it', async () => {
      const res = await post(gw.port, '/hooks/wake', { text: 'later', mode: 'next-heartbeat' });
      assert.equal(res.status, 200, res.text);
      const body = res.json as { mode: string; eventId: string };
      assert.equal(body.mode, 'next-heartbeat');
      assert.equal((await findEvent(gw, body.eventId))?.mode, 'next-heartbeat');
    });

    it('gives each accepted wake its own id', async () => {
      const a = (await post(gw.port, '/hooks/wake', { text: 'one' })).json as { eventId: string };
      const b = (await post(gw.port, '/hooks/wake', { text: 'one' })).json as { eventId: string };
      assert.notEqual(a.eventId, b.eventId);
    });
  });

  describe('agent success', () => {
    it('returns 202 {ok, runId} and stores the run with defaults resolved', async () => {
      const res = await post(gw.port, '/hooks/agent', { message: 'Summarise the inbox' });
      assert.equal(res.status, 202, res.text);
      assert.equal(res.headers['content-type'], 'application/json; charset=utf-8');
      const body = res.json as { ok: boolean; runId: string };
      assert.deepEqual(Object.keys(body).sort(), ['ok', 'runId']);
      assert.equal(body.ok, true);
      assert.match(body.runId, UUID);
      const run = await findRun(gw, body.runId);
      assert.ok(run);
      assert.ok(ACCEPTED_STATES.includes(run.state), `state ${run.state}`);
      assert.equal(run.message, 'Summarise the inbox');
      assert.equal(run.agentId, 'main');
      assert.match(run.sessionKey, HOOK_UUID_KEY);
      assert.equal(run.wakeMode, 'now');
      assert.equal(run.deliver, true);
      assert.equal(run.channel, 'last');
      assert.equal(run.to, null);
      assert.equal(run.model, null);
      assert.equal(run.thinking, null);
      assert.equal(run.timeoutSeconds, 600);
      assert.equal(typeof run.name, 'string');
    });

    it('stores every field the payload set', async () => {
      const run = await acceptedRun(gw, {
        message: 'Deploy finished',
        name: 'CI',
        agentId: 'ops',
        wakeMode: 'next-heartbeat',
        deliver: false,
        channel: 'telegram',
        to: '-100123',
        model: 'small',
        thinking: 'high',
        timeoutSeconds: 45,
      });
      assert.equal(run.message, 'Deploy finished');
      assert.equal(run.name, 'CI');
      assert.equal(run.agentId, 'ops');
      assert.equal(run.wakeMode, 'next-heartbeat');
      assert.equal(run.deliver, false);
      assert.equal(run.channel, 'telegram');
      assert.equal(run.to, '-100123');
      assert.equal(run.model, 'echo/small');
      assert.equal(run.thinking, 'high');
      assert.equal(run.timeoutSeconds, 45);
    });

    it('refuses delivery to a channel that is not configured with 400 channel_not_configured', async () => {
      const res = await post(gw.port, '/hooks/agent', { message: 'm', channel: 'discord', to: '42' });
      assertInvalidField(res, 'channel', 'channel_not_configured');
    });

    it('accepts a channel that is not configured when deliver is false', async () => {
      const run = await acceptedRun(gw, { message: 'm', channel: 'discord', deliver: false });
      assert.equal(run.channel, 'discord');
    });

    it('accepts a fractional timeoutSeconds', async () => {
      const run = await acceptedRun(gw, { message: 'm', timeoutSeconds: 1.5 });
      assert.equal(run.timeoutSeconds, 1.5);
    });
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
      await withGateway(baseConfig({ hooks: { enabled: true, token: HOOK_TOKEN, allowedAgentIds: ['*'] }, agents: AGENTS }), async (g) => {
        assert.equal((await acceptedRun(g, { message: 'm', agentId: 'ops' })).agentId, 'ops');
        assert.equal((await acceptedRun(g, { message: 'm', agentId: 'ghost' })).agentId, 'main');
      });
    });

    it('denies every explicit agentId with 400 agent_not_allowed when allowedAgentIds is []', async () => {
      await withGateway(baseConfig({ hooks: { enabled: true, token: HOOK_TOKEN, allowedAgentIds: [] }, agents: AGENTS }), async (g) => {
        for (const agentId of ['main', 'ops', 'ghost']) {
          assertInvalidField(await post(g.port, '/hooks/agent', { message: 'm', agentId }), 'agentId', 'agent_not_allowed');
        }
        assert.equal((await g.gateway.store.listRuns()).length, 0, 'nothing stored');
      });
    });

    it('still accepts a run without agentId when allowedAgentIds is []', async () => {
      await withGateway(baseConfig({ hooks: { enabled: true, token: HOOK_TOKEN, allowedAgentIds: [] }, agents: AGENTS }), async (g) => {
        assert.equal((await acceptedRun(g, { message: 'm' })).agentId, 'main');
      });
    });

    it('checks the resolved agent against a list', async () => {
      await withGateway(baseConfig({ hooks: { enabled: true, token: HOOK_TOKEN, allowedAgentIds: ['ops'] }, agents: AGENTS }), async (g) => {
        assert.equal((await acceptedRun(g, { message: 'm', agentId: 'ops' })).agentId, 'ops');
        assertInvalidField(await post(g.port, '/hooks/agent', { message: 'm', agentId: 'main' }), 'agentId', 'agent_not_allowed');
        // Unknown → default agent `main`, which is not on the list.
        assertInvalidField(await post(g.port, '/hooks/agent', { message: 'm', agentId: 'ghost' }), 'agentId', 'agent_not_allowed');
      });
    });

    it('allows an unknown agentId when the default agent it falls back to is permitted', async () => {
      await withGateway(baseConfig({ hooks: { enabled: true, token: HOOK_TOKEN, allowedAgentIds: ['main'] }, agents: AGENTS }), async (g) => {
        assert.equal((await acceptedRun(g, { message: 'm', agentId: 'ghost' })).agentId, 'main');
        assertInvalidField(await post(g.port, '/hooks/agent', { message: 'm', agentId: 'ops' }), 'agentId', 'agent_not_allowed');
      });
    });
  });

  describe('agent policy: sessionKey', () => {
    it('rejects a request sessionKey with 400 session_key_not_allowed unless allowRequestSessionKey', async () => {
      assertInvalidField(await post(gw.port, '/hooks/agent', { message: 'm', sessionKey: 'hook:mine' }), 'sessionKey', 'session_key_not_allowed');
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
          assertInvalidField(await post(g.port, '/hooks/agent', { message: 'm', sessionKey }), 'sessionKey', 'session_key_not_allowed');
        }
      });
    });

    it('uses hooks.defaultSessionKey when the request has none', async () => {
      await withGateway(SESSION_CONFIG, async (g) => {
        assert.equal((await acceptedRun(g, { message: 'm' })).sessionKey, 'hook:default');
      });
    });

    it('uses hooks.defaultSessionKey with request overrides off', async () => {
      const config = baseConfig({ hooks: { enabled: true, token: HOOK_TOKEN, defaultSessionKey: 'hook:fixed' }, agents: AGENTS });
      await withGateway(config, async (g) => {
        assert.equal((await acceptedRun(g, { message: 'm' })).sessionKey, 'hook:fixed');
        assertInvalidField(await post(g.port, '/hooks/agent', { message: 'm', sessionKey: 'hook:fixed' }), 'sessionKey', 'session_key_not_allowed');
      });
    });

    it('accepts any request sessionKey when overrides are on and no prefixes are set', async () => {
      const config = baseConfig({ hooks: { enabled: true, token: HOOK_TOKEN, allowRequestSessionKey: true }, agents: AGENTS });
      await withGateway(config, async (g) => {
        assert.equal((await acceptedRun(g, { message: 'm', sessionKey: 'anything:1' })).sessionKey, 'anything:1');
      });
    });
  });

  describe('agent policy: model', () => {
    it('resolves an alias from agents.defaults.models and stores the model ref', async () => {
      assert.equal((await acceptedRun(gw, { message: 'm', model: 'small' })).model, 'echo/small');
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
      assert.ok((res.json as { issues?: Array<{ path: string }> }).issues?.some((i) => i.path === 'model'), res.text);
    });

    it('accepts any echo model when the list is not restricted', async () => {
      await withGateway(baseConfig({ agents: AGENTS }), async (g) => {
        assert.equal((await acceptedRun(g, { message: 'm', model: 'echo/whatever' })).model, 'echo/whatever');
      });
    });
  });

  describe('hostile input', () => {
    it('answers 400 to 100k unterminated nested arrays and stays up', async () => {
      assertError(await post(gw.port, '/hooks/wake', '['.repeat(100_000)), 400, 'invalid_json');
      await assertHealthy(gw.port);
    });

    it('answers 400 to 100k balanced nested arrays and stays up', async () => {
      assertError(await post(gw.port, '/hooks/wake', `${'['.repeat(100_000)}${']'.repeat(100_000)}`), 400, 'invalid_body');
      await assertHealthy(gw.port);
    });

    it('answers 200 or 400 to a deeply nested extra field and stays up', async () => {
      const body = `{"text":"deep","x":${'['.repeat(100_000)}${']'.repeat(100_000)}}`;
      const res = await post(gw.port, '/hooks/wake', body);
      assert.ok(res.status === 200 || res.status === 400, res.text);
      await assertHealthy(gw.port);
    });

    it('answers 400 to 40k nested objects and stays up', async () => {
      const res = await post(gw.port, '/hooks/agent', `${'{"a":'.repeat(40_000)}1${'}'.repeat(40_000)}`);
      assertInvalidField(res, 'message');
      await assertHealthy(gw.port);
    });

    it('does not let a __proto__ key pollute Object.prototype', async () => {
      const res = await post(gw.port, '/hooks/wake', '{"__proto__":{"polluted":"yes","text":"inherited"},"text":"proto"}');
      assert.equal(res.status, 200, res.text);
      assert.equal(({} as Record<string, unknown>)['polluted'], undefined);
      assert.equal((await findEvent(gw, (res.json as { eventId: string }).eventId))?.text, 'proto');
      await assertHealthy(gw.port);
    });

    it('does not read fields through a __proto__ key', async () => {
      assertInvalidField(await post(gw.port, '/hooks/wake', '{"__proto__":{"text":"inherited"}}'), 'text');
      const run = await acceptedRun(gw, '{"message":"m","__proto__":{"sessionKey":"evil:1","agentId":"ops","deliver":false}}');
      assert.match(run.sessionKey, HOOK_UUID_KEY);
      assert.equal(run.agentId, 'main');
      assert.equal(run.deliver, true);
      assert.equal(({} as Record<string, unknown>)['sessionKey'], undefined);
    });

    it('does not let constructor.prototype keys pollute Object.prototype', async () => {
      const res = await post(gw.port, '/hooks/agent', '{"message":"m","constructor":{"prototype":{"polluted":"yes"}}}');
      assert.equal(res.status, 202, res.text);
      assert.equal(({} as Record<string, unknown>)['polluted'], undefined);
      await assertHealthy(gw.port);
    });

    it('survives a client that hangs up in the middle of its body', async () => {
      await new Promise<void>((resolve, reject) => {
        const socket = connect({ host: '127.0.0.1', port: gw.port }, () => {
          socket.write(
            `POST /hooks/wake HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${HOOK_TOKEN}\r\n` +
              'Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"text":"cut',
          );
          setTimeout(() => {
            socket.destroy();
            resolve();
          }, 50);
        });
        socket.on('error', reject);
      });
      await assertHealthy(gw.port);
      const res = await post(gw.port, '/hooks/wake', { text: 'after a hang-up' });
      assert.equal(res.status, 200, res.text);
    });

    it('answers a garbled request line with a JSON 400 and stays up', async () => {
      const res = await rawExchange(gw.port, 'NOT AN HTTP REQUEST\r\n\r\n');
      assertError(res, 400, 'bad_request');
      await assertHealthy(gw.port);
    });

    it('answers oversized headers with a JSON 431 and stays up', async () => {
      const res = await rawExchange(gw.port, `POST /hooks/wake HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
      assertError(res, 431, 'headers_too_large');
      await assertHealthy(gw.port);
    });
  });
});

describe('HTTP contract: body read timeout (step 6)', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startTestGateway(baseConfig({ gateway: { bodyTimeoutMs: 300, logLevel: 'warn' } }));
  });
  after(async () => {
    await gw?.stop();
  });

  const head = (extra: string): string =>
    `POST /hooks/wake HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${HOOK_TOKEN}\r\n` +
    `Content-Type: application/json\r\n${extra}\r\n`;

  it('returns 408 when only half of a declared body arrives in time', async () => {
    const res = await rawExchange(gw.port, head('Content-Length: 100\r\n'), ['{"text":"half a bo']);
    assertError(res, 408, 'body_timeout');
    assert.equal(res.headers['connection'], 'close');
  });

  it('returns 408 when a chunked body never ends', async () => {
    const res = await rawExchange(gw.port, head('Transfer-Encoding: chunked\r\n'), ['a\r\n{"text":"x\r\n']);
    assertError(res, 408, 'body_timeout');
  });

  it('returns 408 when no body byte arrives', async () => {
    const res = await rawExchange(gw.port, head('Content-Length: 20\r\n'));
    assertError(res, 408, 'body_timeout');
  });

  it('still serves after timing out slow bodies', async () => {
    await rawExchange(gw.port, head('Content-Length: 100\r\n'), ['{"te']);
    const res = await post(gw.port, '/hooks/wake', { text: 'after slow' });
    assert.equal(res.status, 200, res.text);
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
      assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= LOCKOUT.lockoutSeconds, `Retry-After ${res.headers['retry-after']}`);
    });
  });

  it('returns 429 to a locked-out client even with the correct token, and stores nothing', async () => {
    await withGateway(lockoutConfig(), async (g) => {
      for (let i = 0; i < LOCKOUT.maxFailures; i++) await post(g.port, '/hooks/wake', { text: 'x' }, wrong);
      const wake = await post(g.port, '/hooks/wake', { text: 'correct token while locked' });
      assertError(wake, 429, 'rate_limited');
      assert.ok(wake.headers['retry-after'] !== undefined);
      assertError(await post(g.port, '/hooks/agent', { message: 'm' }), 429, 'rate_limited');
      assertError(await post(g.port, '/hooks/wake', { text: 'x' }, { auth: false, headers: { 'x-hookgate-token': HOOK_TOKEN } }), 429, 'rate_limited');
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
        assertError(await post(g.port, '/hooks/wake?token=wrong', { text: 'x' }, { auth: false }), 400, 'token_in_query');
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
          assertError(await post(g.port, '/hooks/wake', { text: 'x' }, from('203.0.113.7', 'wrong')), 401, 'unauthorized');
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
        for (let i = 0; i < LOCKOUT.maxFailures; i++) await post(g.port, '/hooks/wake', { text: 'x' }, from('203.0.113.7', 'wrong'));
        assertError(await post(g.port, '/hooks/wake', { text: 'x' }, from('198.51.100.1, 203.0.113.7')), 429, 'rate_limited');
        assertError(await post(g.port, '/hooks/wake', { text: 'x' }, from('203.0.113.7, 127.0.0.1')), 429, 'rate_limited');
      });
    });

    it('trusts a proxy given as a CIDR range', async () => {
      await withGateway(lockoutConfig({ trustedProxies: ['127.0.0.0/8'], logLevel: 'warn' }), async (g) => {
        for (let i = 0; i < LOCKOUT.maxFailures; i++) await post(g.port, '/hooks/wake', { text: 'x' }, from('203.0.113.7', 'wrong'));
        assertError(await post(g.port, '/hooks/wake', { text: 'x' }, from('203.0.113.7')), 429, 'rate_limited');
        const other = await post(g.port, '/hooks/wake', { text: 'other client' }, from('203.0.113.8'));
        assert.equal(other.status, 200, other.text);
      });
    });

    it('folds an IPv4-mapped IPv6 forwarded address onto its IPv4 form', async () => {
      await withGateway(trusted(), async (g) => {
        for (let i = 0; i < LOCKOUT.maxFailures; i++) await post(g.port, '/hooks/wake', { text: 'x' }, from('::ffff:203.0.113.9', 'wrong'));
        assertError(await post(g.port, '/hooks/wake', { text: 'x' }, from('203.0.113.9')), 429, 'rate_limited');
      });
    });
  });

  describe('without a trusted proxy', () => {
    it('ignores X-Forwarded-For and locks out the socket address', async () => {
      await withGateway(lockoutConfig(), async (g) => {
        for (let i = 0; i < LOCKOUT.maxFailures; i++) {
          await post(g.port, '/hooks/wake', { text: 'x' }, { auth: 'wrong', headers: { 'x-forwarded-for': '203.0.113.7' } });
        }
        const res = await post(g.port, '/hooks/wake', { text: 'x' }, { headers: { 'x-forwarded-for': '203.0.113.99' } });
        assertError(res, 429, 'rate_limited');
      });
    });
  });
});

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

describe('HTTP contract: lockout expiry', () => {
  it('lets the client in again once lockoutSeconds have passed', async () => {
    const config = baseConfig({
      hooks: { enabled: true, token: HOOK_TOKEN, authRateLimit: { maxFailures: 2, windowSeconds: 60, lockoutSeconds: 1 } },
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
