import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as delay } from 'node:timers/promises';
import { send, post } from '../helpers/http-client.js';
import { assertError } from '../helpers/assert-response.js';
import { startTestGateway, type TestGateway } from '../helpers/in-process-gateway.js';
import { baseConfig, GATEWAY_TOKEN, HOOK_TOKEN } from '../helpers/temp-config.js';
import type { RequestRecord } from '../../src/store/index.js';
import { signGithub } from '../helpers/sign-webhooks.js';

const admin = (port: number, path: string, method = 'GET') =>
  send(port, `/admin/api${path}`, { method, auth: GATEWAY_TOKEN });

/** Records of rejections are written when the response closes, a commit later: wait for them (bounded). */
async function waitForRecords(port: number, query: string, count: number): Promise<RequestRecord[]> {
  for (let i = 0; i < 100; i++) {
    const res = await admin(port, `/requests${query}`);
    const list = (res.json as { requests: RequestRecord[] }).requests;
    if (list.length >= count) return list;
    await delay(20);
  }
  assert.fail(`fewer than ${count} records for ${query}`);
}

describe('admin API over HTTP', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startTestGateway(baseConfig({ gateway: { recordPayloads: true } }));
  });
  after(() => gw.stop());

  it('answers 401 admin_unauthorized without a token, with the hook token, and with the token in another carrier', async () => {
    assertError(await send(gw.port, '/admin/api/requests', { method: 'GET', auth: false }), 401, 'admin_unauthorized');
    assertError(
      await send(gw.port, '/admin/api/requests', { method: 'GET', auth: HOOK_TOKEN }),
      401,
      'admin_unauthorized',
    );
    assertError(
      await send(gw.port, '/admin/api/requests', {
        method: 'GET',
        auth: false,
        headers: { 'x-hookgate-token': GATEWAY_TOKEN },
      }),
      401,
      'admin_unauthorized',
    );
    const ok = await admin(gw.port, '/requests');
    assert.equal(ok.status, 200);
    assert.equal(ok.headers['cache-control'], 'no-store');
  });

  it('records an accepted wake with the event it created and its payload', async () => {
    const res = await post(gw.port, '/hooks/wake', { text: 'disk almost full', mode: 'next-heartbeat' });
    assert.equal(res.status, 200);
    const eventId = (res.json as { eventId: string }).eventId;
    const [record] = await waitForRecords(gw.port, '?hook=wake&status=200', 1);
    assert.deepEqual(record!.eventIds, [eventId]);
    assert.deepEqual(
      [record!.method, record!.path, record!.client, record!.code],
      ['POST', '/hooks/wake', '127.0.0.1', null],
    );
    assert.deepEqual(JSON.parse(record!.payload!), { text: 'disk almost full', mode: 'next-heartbeat' });
    assert.ok(record!.durationMs >= 0);
  });

  it('records rejections with their code and reason, never the token', async () => {
    assertError(await post(gw.port, '/hooks/agent', { message: 'x' }, { auth: 'wrong-token' }), 401, 'unauthorized');
    assertError(await post(gw.port, '/hooks/wake', { text: 'x', mode: 'later' }), 400, 'invalid_payload');
    const [unauthorized] = await waitForRecords(gw.port, '?status=401', 1);
    assert.deepEqual(
      [unauthorized!.hook, unauthorized!.code, unauthorized!.reason],
      ['agent', 'unauthorized', 'Missing or invalid hook token.'],
    );
    const [invalid] = await waitForRecords(gw.port, '?status=400', 1);
    assert.match(invalid!.reason!, /mode must be one of: now, next-heartbeat/);
    const all = await admin(gw.port, '/requests?limit=500');
    assert.ok(!all.text.includes('wrong-token') && !all.text.includes(HOOK_TOKEN), 'no token in records');
  });

  it('dry-runs a recorded request through the current mapping and policy, storing nothing; replays it for real', async () => {
    const res = await post(gw.port, '/hooks/agent', {
      message: 'summarise the incident',
      deliver: false,
      name: 'Pager',
    });
    assert.equal(res.status, 202);
    const [record] = await waitForRecords(gw.port, '?hook=agent&status=202', 1);
    const runsBefore = ((await admin(gw.port, '/runs?limit=500')).json as { runs: unknown[] }).runs.length;
    const dry = await admin(gw.port, `/requests/${record!.id}/replay?dryRun=1`, 'POST');
    assert.equal(dry.status, 200);
    const action = (dry.json as { action: { kind: string; run: { name: string; message: string; deliver: boolean } } })
      .action;
    assert.deepEqual(
      [action.kind, action.run.name, action.run.message, action.run.deliver],
      ['agent', 'Pager', 'summarise the incident', false],
    );
    assert.equal(
      ((await admin(gw.port, '/runs?limit=500')).json as { runs: unknown[] }).runs.length,
      runsBefore,
      'a dry run stores nothing',
    );
    const real = await admin(gw.port, `/requests/${record!.id}/replay`, 'POST');
    assert.equal(real.status, 202);
    const newRunId = (real.json as { action: { run: { id: string } } }).action.run.id;
    assert.notEqual(newRunId, (res.json as { runId: string }).runId);
    assert.equal((await admin(gw.port, `/runs/${newRunId}`)).status, 200);
  });

  it('serves the dashboard as static files with a strict content security policy', async () => {
    const page = await send(gw.port, '/admin', { method: 'GET', auth: false });
    assert.equal(page.status, 200);
    assert.match(String(page.headers['content-type']), /^text\/html/);
    assert.match(String(page.headers['content-security-policy']), /default-src 'none'/);
    assert.match(page.text, /<script type="module" src="\/admin\/app\.js">/);
    const js = await send(gw.port, '/admin/app.js', { method: 'GET', auth: false });
    assert.equal(js.status, 200);
    assert.match(String(js.headers['content-type']), /^text\/javascript/);
    assertError(await send(gw.port, '/admin/nope.js', { method: 'GET', auth: false }), 404, 'not_found');
  });
});

describe('admin API without gateway.auth.token', () => {
  let gw: TestGateway;
  before(async () => {
    const config = baseConfig();
    (config['gateway'] as { auth: unknown }).auth = {};
    gw = await startTestGateway(config);
  });
  after(() => gw.stop());

  it('answers 404 admin_disabled, whatever token is sent', async () => {
    assertError(await send(gw.port, '/admin/api/requests', { method: 'GET', auth: HOOK_TOKEN }), 404, 'admin_disabled');
  });

  it('records no payload when recordPayloads is off', async () => {
    assert.equal((await post(gw.port, '/hooks/wake', { text: 'private' })).status, 200);
    const records = await gw.gateway.store.listRequests({ hook: 'wake' });
    assert.equal(records.length, 1);
    assert.equal(records[0]!.payload, null);
  });
});

describe('admin API: replaying a hook that accepts only signed requests', () => {
  const SECRET = 'replay-github-secret-0123456789';
  let gw: TestGateway;
  before(async () => {
    gw = await startTestGateway(
      baseConfig({
        gateway: { recordPayloads: true },
        hooks: {
          enabled: true,
          token: HOOK_TOKEN,
          mappings: [
            {
              id: 'github',
              match: { path: 'github' },
              action: 'wake',
              wakeMode: 'next-heartbeat',
              textTemplate: '{{headers.x-github-event}}: {{action}}',
              verify: { kind: 'github', secret: SECRET, required: true },
            },
          ],
        },
      }),
    );
  });
  after(() => gw.stop());

  it('replays it for the operator, with its recorded headers, recorded as an operator replay', async () => {
    const body = JSON.stringify({ action: 'opened' });
    const signed = await send(gw.port, '/hooks/github', { auth: false, body, headers: signGithub(SECRET, body) });
    assert.equal(signed.status, 200, signed.text);
    const [record] = await waitForRecords(gw.port, '?hook=github&status=200', 1);
    assert.equal(record!.headers?.['x-github-event'], 'push');
    assert.equal(record!.headers?.['x-hub-signature-256'] !== undefined, true);
    const replay = await admin(gw.port, `/requests/${record!.id}/replay`, 'POST');
    assert.equal(replay.status, 200, replay.text);
    const event = (replay.json as { action: { event: { id: string; text: string } } }).action.event;
    assert.equal(event.text, 'push: opened');
    assert.notEqual(event.id, (signed.json as { eventId: string }).eventId, 'a new event, not the first answer');
    const records = await waitForRecords(gw.port, '?hook=github', 2);
    const replayed = records.find((r) => r.method === 'REPLAY');
    assert.ok(replayed !== undefined, JSON.stringify(records));
    assert.deepEqual(
      [replayed.status, replayed.path, replayed.client, replayed.reason, replayed.eventIds],
      [200, '/hooks/github', '127.0.0.1', `an operator's replay of request ${record!.id}`, [event.id]],
    );
  });

  it('still refuses the hook token at the door', async () => {
    assertError(await post(gw.port, '/hooks/github', { action: 'opened' }), 401, 'signature_invalid');
  });
});
