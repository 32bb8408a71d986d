/**
 * A provider error that echoes the API key (as some OpenAI-compatible servers do in full) never
 * reaches the run's stored error or the summary posted into the main session, from where it would
 * reach a heartbeat prompt and a chat.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { readConfig } from '../../src/config/index.js';
import { post } from '../helpers/http-client.js';
import { baseConfig, HOOK_TOKEN } from '../helpers/temp-config.js';
import type { FakeServer } from '../fakes/create-fake-server.js';
import { createFakeOpenAi, openAiError } from '../fakes/fake-openai.js';
import { startMappedGateway, until, type MappedGateway } from './mapped-hooks-harness.js';

const API_KEY = 'llm-proxy-key-7d1e0b9c44aa';

describe('secrets in provider errors', () => {
  let fake: FakeServer;
  let gw: MappedGateway;

  before(async () => {
    fake = await createFakeOpenAi({ apiKey: API_KEY });
    gw = await startMappedGateway(
      baseConfig({
        hooks: { enabled: true, token: HOOK_TOKEN },
        models: { providers: { fake: { api: 'openai', baseUrl: `${fake.url}/v1`, apiKey: API_KEY } } },
        agents: {
          defaults: { model: 'fake/gpt-test', heartbeat: { every: 0 } },
          list: [{ id: 'main', default: true }],
        },
      }),
    );
  });
  after(async () => {
    await gw.stop();
    await fake.close();
  });

  it('scrubs the key from the run error and from the summary', async () => {
    fake.script.push(
      openAiError(
        401,
        `Incorrect API key provided: ${API_KEY}. Also tried sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8t.`,
        'invalid_request_error',
        'invalid_api_key',
      ),
    );
    const res = await post(gw.port, '/hooks/agent', {
      message: 'Summarise the deploy log',
      deliver: false,
      wakeMode: 'next-heartbeat',
    });
    const run = await gw.waitForRun((await gw.runOf(res)).id);
    assert.equal(run.state, 'failed');
    assert.ok(run.error !== null && run.error.includes('Incorrect API key provided: [redacted]'), String(run.error));
    assert.equal(run.error.includes(API_KEY), false);
    assert.equal(run.error.includes('Ab3dEf6hIj9kLm2nOp5qRs8t'), false);
    await until(
      async () => (await gw.gateway.store.listSystemEvents({ limit: 100 })).some((e) => e.text.startsWith('Hook ')),
      'the summary',
    );
    const summaries = (await gw.gateway.store.listSystemEvents({ limit: 100 })).filter((e) =>
      e.text.startsWith('Hook '),
    );
    for (const s of summaries) assert.equal(s.text.includes(API_KEY), false, s.text);
    assert.match(summaries[0]!.text, /\[redacted\]/);
  });
});

describe('secrets in stored errors', () => {
  const BOT_TOKEN = '7012345678:AAHk3v9Qx2LmN8pRt5Wy1Zb4Cd6Ef0GhIjK';
  const PROVIDER_KEY = 'provider-key-5f0c2b9e71d4a8';
  const RELOADED_SECRET = 'reloaded-verify-secret-3e8a61';
  const leaky = (id: string, extra: Record<string, unknown> = {}) => ({
    id,
    match: { path: id },
    action: 'wake',
    transform: { module: `${id}.mjs` },
    ...extra,
  });
  const config = (mappings: unknown[]) =>
    baseConfig({
      hooks: { enabled: true, token: HOOK_TOKEN, mappings },
      models: { providers: { fake: { api: 'openai', baseUrl: 'http://127.0.0.1:9/v1', apiKey: PROVIDER_KEY } } },
      channels: { telegram: { botToken: BOT_TOKEN, baseUrl: 'http://127.0.0.1:9' } },
      agents: { defaults: { heartbeat: { every: 0 } }, list: [{ id: 'main', default: true }] },
    });
  const throwing = (text: string) => `export default () => { throw new Error(${JSON.stringify(text)}); };\n`;
  let gw: MappedGateway;

  before(async () => {
    gw = await startMappedGateway(config([leaky('leaky')]), {
      transforms: {
        'leaky.mjs': throwing(
          `upstream said: key ${PROVIDER_KEY}, bot ${BOT_TOKEN}, other sk-proj-Zy9xWv8uTs7rQp6oNm5l`,
        ),
        'leaky-later.mjs': throwing(`echoed ${RELOADED_SECRET}`),
      },
    });
  });
  after(async () => {
    await gw.stop();
  });

  const reasonOf = async (hook: string): Promise<string> => {
    const [record] = await gw.gateway.store.listRequests({ hook, limit: 1 });
    assert.ok(record !== undefined && record.reason !== null, 'a record with a reason');
    return record.reason;
  };

  it("scrubs a transform exception's secrets from the request record's reason", async () => {
    const res = await post(gw.port, '/hooks/leaky', { n: 1 });
    assert.equal(res.status, 500, res.text);
    const reason = await reasonOf('leaky');
    assert.match(reason, /upstream said: key \[redacted\], bot \[redacted\]/);
    for (const secret of [PROVIDER_KEY, BOT_TOKEN, 'Zy9xWv8uTs7rQp6oNm5l'])
      assert.equal(reason.includes(secret), false, reason);
  });

  it('scrubs a secret that a reload added', async () => {
    const verify = { kind: 'hmac', secret: RELOADED_SECRET, header: 'x-signature' };
    writeFileSync(gw.loaded.path, JSON.stringify(config([leaky('leaky'), leaky('leaky-later', { verify })])));
    gw.gateway.reload(readConfig(gw.loaded.path, {}));
    assert.equal((await post(gw.port, '/hooks/leaky-later', { n: 1 })).status, 500);
    assert.equal(
      await reasonOf('leaky-later'),
      'The hook transform failed. (transform threw: echoed [redacted] (at leaky-later.mjs:1:30))',
    );
  });
});
