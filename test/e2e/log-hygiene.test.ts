/** Logs never carry a token or a payload, at any level, whatever the request did. */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createLog } from '../../src/common/log.js';
import { readConfig } from '../../src/config/index.js';
import { startGateway, type Gateway } from '../../src/main.js';
import { createFakeOpenAi, openAiError } from '../fakes/fake-openai.js';

const TOKEN = 'log-hygiene-token-5c1f0e7a';
const SECRET_PAYLOAD = 'PAYLOAD-MARKER-do-not-log-7d2b';

describe('log hygiene', () => {
  let gateway: Gateway;
  let dir: string;
  const lines: string[] = [];

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'hookgate-logs-'));
    mkdirSync(join(dir, 'hooks', 'transforms'), { recursive: true });
    writeFileSync(
      join(dir, 'hooks', 'transforms', 'boom.js'),
      'export default () => { throw new Error("transform exploded"); };\n',
    );
    writeFileSync(
      join(dir, 'hookgate.json'),
      JSON.stringify({
        gateway: { logLevel: 'debug' },
        hooks: {
          enabled: true,
          token: TOKEN,
          authRateLimit: { maxFailures: 3 },
          mappings: [{ id: 'boom', match: { path: 'boom' }, transform: { module: 'boom.js' } }],
        },
        agents: { defaults: { heartbeat: { every: 0 } }, list: [{ id: 'main' }] },
      }),
    );
    gateway = await startGateway(readConfig(join(dir, 'hookgate.json'), {}), {
      port: 0,
      log: createLog({ level: 'debug', write: (l) => lines.push(l) }),
      runtime: { coalesceMs: 10 },
    });
  });
  after(async () => {
    await gateway?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('writes neither the token nor payload text, for accepted, rejected and failing requests', async () => {
    const send = (path: string, body: string, token = TOKEN): Promise<Response> =>
      fetch(`http://127.0.0.1:${gateway.port}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}` },
        body,
      });
    const statuses = [
      (await send('/hooks/wake', JSON.stringify({ text: SECRET_PAYLOAD }))).status,
      (await send('/hooks/agent', JSON.stringify({ message: SECRET_PAYLOAD, deliver: false }))).status,
      (await send('/hooks/agent', JSON.stringify({ message: SECRET_PAYLOAD, channel: 'fax' }))).status,
      (await send('/hooks/wake', `{"text":"${SECRET_PAYLOAD}`)).status,
      (await send('/hooks/boom', JSON.stringify({ text: SECRET_PAYLOAD }))).status,
      (await send(`/hooks/wake?token=${TOKEN}`, '{}')).status,
    ];
    for (let i = 0; i < 4; i++) statuses.push((await send('/hooks/wake', '{}', `${TOKEN}-wrong`)).status);
    assert.deepEqual(statuses, [200, 202, 400, 400, 500, 400, 401, 401, 401, 429]);
    await sleep(300); // let the run and the heartbeat write their lines
    const all = lines.join('');
    assert.ok(lines.length > 5, 'the gateway did log');
    assert.match(all, /transform exploded/, 'the real transform error is in the log');
    assert.ok(!all.includes(TOKEN), 'no token in the log');
    assert.ok(!all.includes(SECRET_PAYLOAD), 'no payload text in the log');
  });

  it('writes one info access line per hook request, accepted or refused, with what happened', () => {
    const access = lines
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((l) => l['msg'] === 'hook request');
    assert.equal(access.length, 10, 'one line per request');
    assert.deepEqual(
      access.filter(
        (l) =>
          !(l['level'] === 30 && l['method'] === 'POST' && l['client'] === '127.0.0.1' && typeof l['ms'] === 'number'),
      ),
      [],
    );
    assert.deepEqual(
      access.map((l) => [l['hook'], l['status'], l['code']]),
      [
        ['wake', 200, null],
        ['agent', 202, null],
        ['agent', 400, 'invalid_payload'],
        ['wake', 400, 'invalid_json'],
        ['boom', 500, 'transform_failed'],
        ['wake', 400, 'token_in_query'],
        ['wake', 401, 'unauthorized'],
        ['wake', 401, 'unauthorized'],
        ['wake', 401, 'unauthorized'],
        ['wake', 429, 'rate_limited'],
      ],
    );
    assert.match(String(access[0]!['eventId']), /^[0-9a-f-]{36}$/);
    assert.match(String(access[1]!['runId']), /^[0-9a-f-]{36}$/);
    assert.equal(access[5]!['path'], '/hooks/wake', 'the path is logged without its query');
  });
});

describe('log: a failing model run', () => {
  const WRONG_KEY = 'sk-wrong-key-4e1d9b';
  it('logs the model retry at warn with attempt and wait, then the failure with its category and message, never the key', async () => {
    const fake = await createFakeOpenAi({ apiKey: 'sk-right-key' });
    const dir = mkdtempSync(join(tmpdir(), 'hookgate-logs-run-'));
    const lines: string[] = [];
    let gw: Gateway | undefined;
    try {
      writeFileSync(
        join(dir, 'hookgate.json'),
        JSON.stringify({
          hooks: { enabled: true, token: TOKEN },
          models: { providers: { fake: { api: 'openai', baseUrl: `${fake.url}/v1`, apiKey: WRONG_KEY } } },
          agents: {
            defaults: { model: 'fake/gpt-test', heartbeat: { every: 0 } },
            list: [{ id: 'main', workspace: '.' }],
          },
        }),
      );
      gw = await startGateway(readConfig(join(dir, 'hookgate.json'), {}), {
        port: 0,
        log: createLog({ level: 'info', write: (l) => lines.push(l) }),
        runtime: { coalesceMs: 10 },
      });
      // First a 503 (retried), then the real answer to a wrong key: 401 (not retried).
      fake.script.push(openAiError(503, 'The server is overloaded or not ready yet.', 'server_error'));
      const res = await fetch(`http://127.0.0.1:${gw.port}/hooks/agent`, {
        method: 'POST',
        headers: { authorization: `Bearer ${TOKEN}` },
        body: JSON.stringify({ message: SECRET_PAYLOAD, deliver: false }),
      });
      assert.equal(res.status, 202);
      const { runId } = (await res.json()) as { runId: string };
      for (let i = 0; i < 200 && (await gw.store.getRun(runId))?.state !== 'failed'; i++) await sleep(50);
      assert.equal((await gw.store.getRun(runId))?.state, 'failed');
      // The outcome is readable once committed; its line is written once the commit's sync is done.
      for (let i = 0; i < 100 && !lines.some((l) => l.includes('"run failed"')); i++) await sleep(20);
      const parsed = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
      const retry = parsed.find((l) => l['msg'] === 'model call failed; will retry');
      assert.ok(retry !== undefined, lines.join(''));
      assert.equal(retry['level'], 40);
      assert.equal(retry['attempt'], 1);
      assert.equal(retry['status'], 503);
      assert.equal(typeof retry['waitMs'], 'number');
      const failed = parsed.find((l) => l['msg'] === 'run failed');
      assert.ok(failed !== undefined, lines.join(''));
      assert.equal(failed['level'], 40);
      assert.equal(failed['runId'], runId);
      assert.equal(failed['category'], 'provider_auth');
      assert.match(String(failed['error']), /Incorrect API key provided/);
      const all = lines.join('');
      assert.ok(!all.includes(WRONG_KEY), 'no API key in the log');
      assert.ok(!all.includes(SECRET_PAYLOAD), 'no payload text in the log');
    } finally {
      await gw?.close();
      await fake.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
