/**
 * A provider error that echoes the API key (as some OpenAI-compatible servers do in full) never
 * reaches the run's stored error or the summary posted into the main session, from where it would
 * reach a heartbeat prompt and a chat.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
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
