/**
 * The HTTP contract of DESIGN §3, the payload: field validation (step 8) and the 200/202 answers
 * with the records they store, against the real server started in this process on port 0.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { assertInvalidField } from '../helpers/assert-response.js';
import { post } from '../helpers/http-client.js';
import { startTestGateway, type TestGateway } from '../helpers/in-process-gateway.js';
import { HOOK_TOKEN } from '../helpers/temp-config.js';
import { ACCEPTED_STATES, acceptedRun, findEvent, findRun, HOOK_UUID_KEY, MAIN_CONFIG } from './http-contract-setup.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('HTTP contract', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startTestGateway(MAIN_CONFIG);
  });
  after(async () => {
    await gw?.stop();
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
      assertInvalidField(
        await post(gw.port, '/hooks/agent', '{"message":"m","timeoutSeconds":1e400}'),
        'timeoutSeconds',
      );
    });

    it('agent: names every offending field in one answer', async () => {
      const paths = assertInvalidField(
        await post(gw.port, '/hooks/agent', { deliver: 'yes', channel: 'fax', timeoutSeconds: 0 }),
        'message',
      );
      for (const p of ['deliver', 'channel', 'timeoutSeconds'])
        assert.ok(paths.includes(p), `${p} in ${paths.join(',')}`);
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
});
