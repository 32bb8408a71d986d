/**
 * Mapped hooks end to end, part 1: which mapping a `/hooks/<name>` call resolves to (order, user
 * mappings before presets, path normalisation, `match.source`), how templates build the action,
 * the policy applied to it, and the auth and size limits mapped names share with built-ins.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { assertError, assertInvalidField } from '../helpers/assert-response.js';
import { post, send } from '../helpers/http-client.js';
import { baseConfig, HOOK_TOKEN } from '../helpers/temp-config.js';
import { startMappedGateway, type MappedGateway } from './mapped-hooks-harness.js';

const CONFIG = baseConfig({
  hooks: {
    enabled: true,
    token: HOOK_TOKEN,
    presets: ['gmail'],
    allowedSessionKeyPrefixes: ['hook:'],
    allowedAgentIds: ['ops'],
    maxBodyBytes: 8 * 1024,
    authRateLimit: { maxFailures: 6000, windowSeconds: 600, lockoutSeconds: 600 },
    mappings: [
      { id: 'first', match: { path: 'dup' }, action: 'wake', textTemplate: 'first wins' },
      { id: 'second', match: { path: 'dup' }, action: 'wake', textTemplate: 'second' },
      { id: 'my-gmail', match: { path: 'gmail' }, action: 'wake', textTemplate: 'user gmail mapping' },
      { id: 'slashes', match: { path: '/nested/path/' }, action: 'wake', textTemplate: 'nested' },
      { id: 'ci', match: { path: 'ingest', source: 'ci' }, action: 'wake', textTemplate: 'CI: {{status}} {{job}}' },
      {
        id: 'alerts',
        match: { path: 'ingest', source: 'alerts' },
        action: 'agent',
        messageTemplate: 'Alert: {{summary}}',
      },
      {
        id: 'tpl',
        match: { path: 'tpl' },
        action: 'agent',
        name: '{{headers.x-origin}} feed',
        messageTemplate:
          '{{event}} at /{{path}} ref={{query.ref}} now={{now}} ua={{headers.x-custom-thing}} by={{payload.sender.login}}',
        sessionKey: 'hook:tpl:{{thread}}',
        to: '{{chat}}',
        model: '{{model}}',
        thinking: '{{level}}',
        channel: 'telegram',
        deliver: false,
        wakeMode: 'next-heartbeat',
      },
      {
        id: 'secrets',
        match: { path: 'secrets' },
        action: 'wake',
        textTemplate:
          'auth=[{{headers.authorization}}] token=[{{headers.x-hookgate-token}}] legacy=[{{headers.x-openclaw-token}}] seen=[{{headers.x-seen}}]',
      },
      { id: 'empty-message', match: { path: 'empty-message' }, action: 'agent', messageTemplate: '{{missing}}' },
      { id: 'empty-text', match: { path: 'empty-text' }, action: 'wake', textTemplate: '  {{missing}}  ' },
      {
        id: 'thinking',
        match: { path: 'thinking' },
        action: 'agent',
        messageTemplate: 'think',
        thinking: '{{level}}',
        deliver: false,
      },
      {
        id: 'session',
        match: { path: 'session' },
        action: 'agent',
        messageTemplate: 'session',
        sessionKey: '{{key}}',
        deliver: false,
      },
      {
        id: 'to-ops',
        match: { path: 'to-ops' },
        action: 'agent',
        messageTemplate: 'for ops',
        agentId: 'ops',
        deliver: false,
      },
      {
        id: 'to-research',
        match: { path: 'to-research' },
        action: 'agent',
        messageTemplate: 'for research',
        agentId: 'research',
      },
      { id: 'raw-agent', match: { path: 'raw-agent' }, action: 'agent', deliver: false },
      { id: 'raw-wake', match: { path: 'raw-wake' }, action: 'wake', wakeMode: 'next-heartbeat' },
      // Last: a source-only mapping matches any name.
      { id: 'deploys', match: { source: 'deploy' }, action: 'wake', textTemplate: 'deploy {{version}} via {{path}}' },
    ],
  },
  agents: { list: [{ id: 'main', default: true }, { id: 'ops' }, { id: 'research' }] },
});

let gw: MappedGateway;
before(async () => {
  gw = await startMappedGateway(CONFIG);
});
after(() => gw.stop());

/** Runs, and system events other than run summaries (earlier runs may still be finishing). */
async function storedCounts(): Promise<{ runs: number; events: number }> {
  const runs = (await gw.gateway.store.listRuns({ limit: 10_000 })).length;
  const events = (await gw.gateway.store.listSystemEvents({ limit: 10_000 })).filter(
    (e) => !e.text.startsWith('Hook '),
  ).length;
  return { runs, events };
}

describe('mapped hooks: matching', () => {
  it('takes the first matching mapping in config order', async () => {
    const event = await gw.eventOf(await post(gw.port, '/hooks/dup', {}));
    assert.equal(event.text, 'first wins');
    assert.equal(event.source.hook, 'first');
  });

  it('tries user mappings before presets: a user mapping at gmail beats the gmail preset', async () => {
    const event = await gw.eventOf(
      await post(gw.port, '/hooks/gmail', { messages: [{ id: 'abc', from: 'x@example.com' }] }),
    );
    assert.equal(event.text, 'user gmail mapping');
    assert.equal(event.source.hook, 'my-gmail');
  });

  for (const path of ['/hooks/nested/path', '/hooks/nested/path/', '/hooks//nested/path']) {
    it(`ignores leading and trailing slashes (match.path "/nested/path/", called as ${path})`, async () => {
      const event = await gw.eventOf(await post(gw.port, path, {}));
      assert.equal(event.source.hook, 'slashes');
    });
  }

  for (const path of ['/hooks/Nested/Path', '/hooks/DUP', '/hooks/Dup']) {
    it(`matches case-sensitively: ${path} → 404 hook_not_found`, async () => {
      assertError(await post(gw.port, path, {}), 404, 'hook_not_found');
    });
  }

  it('serves /hooks/wake and /hooks/agent with the built-ins, even when a source-only mapping matches the payload', async () => {
    const event = await gw.eventOf(
      await post(gw.port, '/hooks/wake', { source: 'deploy', version: '9.9.9', text: 'built-in wake' }),
    );
    assert.equal(event.text, 'built-in wake');
    assert.equal(event.source.hook, 'wake');
    const run = await gw.runOf(
      await post(gw.port, '/hooks/agent', { source: 'deploy', message: 'built-in agent', deliver: false }),
    );
    assert.equal(run.source.hook, 'agent');
  });

  it('never lets a mapping serve a reserved name written another way (/hooks//wake)', async () => {
    const before = await storedCounts();
    assertError(
      await post(gw.port, '/hooks//wake', { source: 'deploy', version: '1', text: 'x' }),
      404,
      'hook_not_found',
    );
    assert.deepEqual(await storedCounts(), before);
  });

  it('answers 404 hook_not_found for a name no mapping matches, storing nothing', async () => {
    const before = await storedCounts();
    assertError(await post(gw.port, '/hooks/unknown-thing', { text: 'hi', message: 'hi' }), 404, 'hook_not_found');
    assert.deepEqual(await storedCounts(), before);
  });

  it('matches a source-only mapping at any name', async () => {
    for (const name of ['anything', 'a/b']) {
      const event = await gw.eventOf(await post(gw.port, `/hooks/${name}`, { source: 'deploy', version: '1.4.2' }));
      assert.equal(event.text, `deploy 1.4.2 via ${name}`);
      assert.equal(event.source.hook, 'deploys');
    }
  });
});

describe('mapped hooks: one ingest endpoint routed by source', () => {
  it('turns source "ci" into a wake (200) with the templated text', async () => {
    const res = await post(gw.port, '/hooks/ingest', { source: 'ci', status: 'passed', job: 'build-linux' });
    assert.equal(res.status, 200, res.text);
    assert.equal((res.json as { mode?: unknown }).mode, 'now');
    const event = await gw.eventOf(res);
    assert.equal(event.text, 'CI: passed build-linux');
    assert.equal(event.sessionKey, 'agent:main:main');
    assert.equal(event.source.hook, 'ci');
  });

  it('turns source "alerts" into an agent run (202)', async () => {
    const run = await gw.runOf(await post(gw.port, '/hooks/ingest', { source: 'alerts', summary: 'disk 91% on db-2' }));
    assert.equal(run.message, 'Alert: disk 91% on db-2');
    assert.equal(run.source.hook, 'alerts');
  });

  it('routes a JSON body by source when its Content-Type says form (curl -d)', async () => {
    const body = JSON.stringify({ source: 'ci', status: 'passed', job: 'curl' });
    const res = await send(gw.port, '/hooks/ingest', {
      body,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    assert.equal(res.status, 200, res.text);
    assert.equal((await gw.eventOf(res)).text, 'CI: passed curl');
  });

  const others: Array<[string, Record<string, unknown>]> = [
    ['another source', { source: 'billing', status: 'passed' }],
    ['no source', { status: 'passed' }],
    ['an upper-case source', { source: 'CI', status: 'passed' }],
    ['a non-string source', { source: ['ci'], status: 'passed' }],
    ['a numeric source', { source: 7 }],
  ];
  for (const [what, payload] of others) {
    it(`answers 404 hook_not_found for ${what}`, async () => {
      assertError(await post(gw.port, '/hooks/ingest', payload), 404, 'hook_not_found');
    });
  }
});

describe('mapped hooks: templates', () => {
  it('renders name, message, sessionKey, to, model and thinking from payload, headers, query, path and now', async () => {
    const before = new Date().toISOString();
    const res = await post(
      gw.port,
      '/hooks/tpl?ref=main',
      {
        event: 'deploy_finished',
        sender: { login: 'kestrel-dev' },
        thread: 'th-77',
        chat: '-1001234567',
        model: 'echo/tiny',
        level: 'medium',
      },
      { headers: { 'X-Origin': 'Buildkite', 'X-Custom-Thing': 'Mixed-Case-Value' } },
    );
    const afterIso = new Date().toISOString();
    const run = await gw.runOf(res);
    const now = /now=(\S+)/.exec(run.message)?.[1] ?? '';
    assert.match(now, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    assert.ok(now >= before && now <= afterIso, `${before} <= ${now} <= ${afterIso}`);
    assert.equal(run.message, `deploy_finished at /tpl ref=main now=${now} ua=Mixed-Case-Value by=kestrel-dev`);
    assert.equal(run.name, 'Buildkite feed');
    assert.equal(run.sessionKey, 'hook:tpl:th-77');
    assert.equal(run.to, '-1001234567');
    assert.equal(run.model, 'echo/tiny');
    assert.equal(run.thinking, 'medium');
    assert.equal(run.channel, 'telegram');
    assert.equal(run.deliver, false);
    assert.equal(run.wakeMode, 'next-heartbeat');
  });

  it('does not show Authorization to templates', async () => {
    const event = await gw.eventOf(await post(gw.port, '/hooks/secrets', {}, { headers: { 'X-Seen': 'yes' } }));
    assert.equal(event.text, 'auth=[] token=[] legacy=[] seen=[yes]');
  });

  it('does not show x-hookgate-token to templates', async () => {
    const res = await post(
      gw.port,
      '/hooks/secrets',
      {},
      { auth: false, headers: { 'x-hookgate-token': HOOK_TOKEN, 'X-Seen': 'yes' } },
    );
    const event = await gw.eventOf(res);
    assert.equal(event.text, 'auth=[] token=[] legacy=[] seen=[yes]');
    assert.ok(!event.text.includes(HOOK_TOKEN));
  });

  it('refuses a message that renders empty with 400 naming message, storing nothing', async () => {
    const before = await storedCounts();
    assertInvalidField(await post(gw.port, '/hooks/empty-message', { other: 'x' }), 'message');
    assert.deepEqual(await storedCounts(), before);
  });

  it('refuses a wake text that renders empty with 400 naming text', async () => {
    assertInvalidField(await post(gw.port, '/hooks/empty-text', { other: 'x' }), 'text');
  });

  it('refuses a rendered thinking level outside the levels with 400 naming thinking', async () => {
    assertInvalidField(await post(gw.port, '/hooks/thinking', { level: 'ultra' }), 'thinking');
  });

  it('accepts a rendered thinking level', async () => {
    assert.equal((await gw.runOf(await post(gw.port, '/hooks/thinking', { level: 'xhigh' }))).thinking, 'xhigh');
  });

  it('holds a template-built sessionKey to allowedSessionKeyPrefixes', async () => {
    assertInvalidField(
      await post(gw.port, '/hooks/session', { key: 'ops:payroll' }),
      'sessionKey',
      'session_key_not_allowed',
    );
  });

  it('does not hold a template-built sessionKey to allowRequestSessionKey', async () => {
    const run = await gw.runOf(await post(gw.port, '/hooks/session', { key: 'hook:thread-5' }));
    assert.equal(run.sessionKey, 'hook:thread-5');
    // The same key sent by a caller to /hooks/agent is refused in this config.
    assertInvalidField(
      await post(gw.port, '/hooks/agent', { message: 'x', sessionKey: 'hook:thread-5' }),
      'sessionKey',
      'session_key_not_allowed',
    );
  });

  it('applies allowedAgentIds to a mapping agentId', async () => {
    assert.equal((await gw.runOf(await post(gw.port, '/hooks/to-ops', {}))).agentId, 'ops');
    assertInvalidField(await post(gw.port, '/hooks/to-research', {}), 'agentId', 'agent_not_allowed');
  });

  it('reads message from the payload for an agent mapping without messageTemplate', async () => {
    assert.equal(
      (await gw.runOf(await post(gw.port, '/hooks/raw-agent', { message: 'hello there', other: 1 }))).message,
      'hello there',
    );
  });

  it('uses the payload as JSON when it carries no message', async () => {
    const payload = { event: 'ping', n: 1, nested: { ok: true } };
    assert.equal((await gw.runOf(await post(gw.port, '/hooks/raw-agent', payload))).message, JSON.stringify(payload));
  });

  it('reads text from the payload for a wake mapping without textTemplate', async () => {
    const event = await gw.eventOf(await post(gw.port, '/hooks/raw-wake', { text: 'plain text', message: 'not this' }));
    assert.equal(event.text, 'plain text');
    assert.equal(event.mode, 'next-heartbeat');
  });
});

describe('mapped hooks: shared auth and limits', () => {
  it('answers 401 to a mapped name without a token', async () => {
    assertError(await post(gw.port, '/hooks/dup', {}, { auth: false }), 401, 'unauthorized');
  });

  it('answers 401, not 404, to an unmapped name without a token', async () => {
    assertError(await post(gw.port, '/hooks/unknown-thing', {}, { auth: false }), 401, 'unauthorized');
  });

  it('answers 401 to a mapped name with a wrong token', async () => {
    assertError(await post(gw.port, '/hooks/ingest', { source: 'ci' }, { auth: 'not-the-token' }), 401, 'unauthorized');
  });

  it('answers 413 to a mapped name with a body over maxBodyBytes, storing nothing', async () => {
    const before = await storedCounts();
    assertError(await post(gw.port, '/hooks/dup', { padding: 'x'.repeat(16 * 1024) }), 413, 'payload_too_large');
    assert.deepEqual(await storedCounts(), before);
  });

  it('answers 400 token_in_query to a mapped name with ?token=, even with a valid header', async () => {
    assertError(await post(gw.port, `/hooks/dup?token=${HOOK_TOKEN}`, {}), 400, 'token_in_query');
  });

  it('answers 405 to a GET on a mapped name', async () => {
    assertError(await send(gw.port, '/hooks/dup', { method: 'GET' }), 405, 'method_not_allowed');
  });
});
