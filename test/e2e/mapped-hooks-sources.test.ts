/**
 * Mapped hooks end to end, part 4: real-world sources and what reaches the model. The gmail
 * preset with a mail-watcher payload, a GitHub `pull_request` webhook through a user mapping, and
 * `allowUnsafeExternalContent` deciding whether hook content is wrapped as untrusted.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { assertError, assertInvalidField } from '../helpers/assert-response.js';
import { post } from '../helpers/http-client.js';
import { startTestGateway } from '../helpers/in-process-gateway.js';
import { baseConfig, HOOK_TOKEN } from '../helpers/temp-config.js';
import type { FakeServer, RecordedRequest } from '../fakes/create-fake-server.js';
import { createFakeOpenAi } from '../fakes/fake-openai.js';
import { objectAt, readJsonFixture, stringAt } from '../fixtures/read-fixture.js';
import { startMappedGateway, until, type MappedGateway } from './mapped-hooks-harness.js';

const START_MARKER = /<<<EXTERNAL_UNTRUSTED_CONTENT id="([0-9a-f]+)">>>/;

interface ChatMessage {
  role: string;
  content: string;
}

/** The messages of a Chat Completions request the fake recorded. */
function messagesOf(req: RecordedRequest): ChatMessage[] {
  const messages = (req.body as { messages?: unknown } | null)?.messages;
  assert.ok(Array.isArray(messages), 'a chat request');
  return messages.map((m: unknown) => {
    const { role, content } = m as { role?: unknown; content?: unknown };
    assert.ok(typeof role === 'string' && typeof content === 'string');
    return { role, content };
  });
}

function lastUserContent(req: RecordedRequest): string {
  return messagesOf(req).at(-1)?.content ?? '';
}

describe('mapped hooks with a model: wrapping, gmail preset', () => {
  let fake: FakeServer;
  let gw: MappedGateway;
  const gmail = readJsonFixture('gmail-message.json');
  const [mail] = gmail['messages'] as Array<Record<string, unknown>>;
  assert.ok(mail !== undefined);

  before(async () => {
    fake = await createFakeOpenAi({
      apiKey: 'sk-fake-mapped',
      reply: (b) => (String(b.messages?.at(-1)?.content ?? '').startsWith('Heartbeat.') ? 'HEARTBEAT_OK' : 'Noted.'),
    });
    const quiet = { deliver: false, wakeMode: 'next-heartbeat' };
    gw = await startMappedGateway(
      baseConfig({
        hooks: {
          enabled: true,
          token: HOOK_TOKEN,
          presets: ['gmail'],
          gmail: { model: 'fake/gpt-mail', thinking: 'low', account: 'ops@tidewater.example' },
          allowedSessionKeyPrefixes: ['hook:'],
          mappings: [
            {
              id: 'trusted',
              match: { path: 'trusted' },
              action: 'agent',
              name: 'Deploys',
              allowUnsafeExternalContent: true,
              messageTemplate: 'Deploy {{version}} finished on {{env}}',
              ...quiet,
            },
            {
              id: 'untrusted',
              match: { path: 'untrusted' },
              action: 'agent',
              name: 'Deploys',
              messageTemplate: 'Deploy {{version}} finished on {{env}}',
              ...quiet,
            },
            {
              id: 'trusted-wake',
              match: { path: 'trusted-wake' },
              action: 'wake',
              allowUnsafeExternalContent: true,
              textTemplate: 'Backup {{id}} verified',
            },
            {
              id: 'untrusted-wake',
              match: { path: 'untrusted-wake' },
              action: 'wake',
              textTemplate: 'Backup {{id}} verified',
            },
          ],
        },
        models: { providers: { fake: { api: 'openai', baseUrl: `${fake.url}/v1`, apiKey: 'sk-fake-mapped' } } },
        agents: {
          defaults: { model: 'fake/gpt-test', heartbeat: { every: 0 } },
          list: [{ id: 'main', default: true }],
        },
      }),
    );
  });
  after(async () => {
    await gw?.stop();
    await fake?.close();
  });

  /** The line of the heartbeat prompt holding `text`, and the line before it. */
  async function heartbeatLines(text: string): Promise<{ line: string; previous: string }> {
    let prompt = '';
    await until(() => {
      prompt = fake.requests.map(lastUserContent).find((c) => c.startsWith('Heartbeat.') && c.includes(text)) ?? '';
      return prompt !== '';
    }, `a heartbeat showing "${text}"`);
    const lines = prompt.split('\n');
    const i = lines.findIndex((l) => l.includes(text));
    return { line: lines[i] ?? '', previous: lines[i - 1] ?? '' };
  }

  it('shows a wake from an allowUnsafeExternalContent mapping to the heartbeat unwrapped', async () => {
    assert.equal((await post(gw.port, '/hooks/trusted-wake', { id: 'b-101' })).status, 200);
    const { line } = await heartbeatLines('Backup b-101 verified');
    assert.match(line, /^- \[\d{4}-\d\d-\d\dT[^\]]+\] Backup b-101 verified$/);
  });

  it('wraps a wake from a mapping without it in the heartbeat prompt', async () => {
    assert.equal((await post(gw.port, '/hooks/untrusted-wake', { id: 'b-102' })).status, 200);
    const { line, previous } = await heartbeatLines('Backup b-102 verified');
    assert.equal(line, 'Backup b-102 verified');
    assert.match(previous, START_MARKER);
  });

  it("sends an allowUnsafeExternalContent mapping's message to the model unwrapped", async () => {
    const run = await gw.runOf(await post(gw.port, '/hooks/trusted', { version: '2.8.1', env: 'staging' }));
    assert.equal((await gw.waitForRun(run.id)).state, 'succeeded');
    const req = fake.requests.find((r) => lastUserContent(r).includes('Deploy 2.8.1'));
    assert.ok(req !== undefined, 'the model was called');
    assert.equal(lastUserContent(req), 'Deploy 2.8.1 finished on staging');
  });

  it("wraps a mapping's message without it in the untrusted-content markers", async () => {
    const run = await gw.runOf(await post(gw.port, '/hooks/untrusted', { version: '2.8.2', env: 'prod' }));
    assert.equal((await gw.waitForRun(run.id)).state, 'succeeded');
    const req = fake.requests.find((r) => lastUserContent(r).includes('Deploy 2.8.2'));
    assert.ok(req !== undefined, 'the model was called');
    const prompt = lastUserContent(req);
    const start = START_MARKER.exec(prompt);
    assert.ok(start !== null, prompt);
    const end = `<<<END_EXTERNAL_UNTRUSTED_CONTENT id="${start[1]}">>>`;
    assert.ok(prompt.includes(`${start[0]}\nDeploy 2.8.2 finished on prod\n${end}`), prompt);
  });

  it('turns a mail-watcher payload at /hooks/gmail into a Gmail run keyed by message id', async () => {
    const res = await post(gw.port, '/hooks/gmail', gmail);
    const run = await gw.runOf(res);
    assert.equal(run.name, 'Gmail');
    assert.equal(run.sessionKey, `hook:gmail:${stringAt(mail, 'id')}`);
    assert.equal(run.source.hook, 'gmail');
    for (const field of ['from', 'subject', 'snippet', 'body']) {
      assert.ok(run.message.includes(stringAt(mail, field)), `the message carries ${field}: ${run.message}`);
    }
  });

  it('runs each message once: a repeated notification of the same message id starts nothing', async () => {
    const again = await post(gw.port, '/hooks/gmail', gmail);
    assert.equal(again.status, 202, again.text);
    const items = (again.json as { items: Array<{ runId: string; duplicate?: boolean }> }).items;
    assert.equal(items.length, 1);
    assert.equal(items[0]!.duplicate, true);
  });

  it('fans a notification with several messages out into one run per message', async () => {
    const two = {
      messages: [
        { ...mail, id: 'fanout-1', subject: 'First of two' },
        { ...mail, id: 'fanout-2', subject: 'Second of two' },
      ],
    };
    const res = await post(gw.port, '/hooks/gmail', two);
    assert.equal(res.status, 202, res.text);
    const items = (res.json as { items: Array<{ runId: string }> }).items;
    assert.equal(items.length, 2);
    const runs = await Promise.all(items.map((i) => gw.gateway.store.getRun(i.runId)));
    assert.deepEqual(
      runs.map((r) => r?.sessionKey),
      ['hook:gmail:fanout-1', 'hook:gmail:fanout-2'],
    );
    assert.ok(runs[1]!.message.includes('Second of two') && !runs[1]!.message.includes('First of two'));
  });

  it('applies hooks.gmail model and thinking to the run', async () => {
    const fresh = { messages: [{ ...mail, id: 'model-check-1' }] };
    const run = await gw.runOf(await post(gw.port, '/hooks/gmail', fresh));
    assert.equal(run.model, 'fake/gpt-mail');
    assert.equal(run.thinking, 'low');
    const done = await gw.waitForRun(run.id);
    assert.equal(done.state, 'succeeded', done.error ?? '');
    assert.equal(done.modelUsed, 'fake/gpt-mail');
    const req = fake.requests.find((r) => (r.body as { model?: unknown }).model === 'gpt-mail');
    assert.ok(req !== undefined, 'the model named by hooks.gmail.model was called');
    assert.equal((req.body as { reasoning_effort?: unknown }).reasoning_effort, 'low');
    assert.ok(lastUserContent(req).includes(stringAt(mail, 'subject')));
  });

  for (const [what, payload] of [
    ['no messages', { account: 'ops@tidewater.example' }],
    ['an empty messages array', { messages: [] }],
  ] as const) {
    it(`refuses a gmail payload with ${what}: 400 naming messages`, async () => {
      assertInvalidField(await post(gw.port, '/hooks/gmail', payload), 'messages');
    });
  }
});

describe('mapped hooks without presets', () => {
  it('answers 404 at /hooks/gmail when the gmail preset is not enabled', async () => {
    const gw = await startTestGateway(baseConfig());
    try {
      assertError(await post(gw.port, '/hooks/gmail', readJsonFixture('gmail-message.json')), 404, 'hook_not_found');
    } finally {
      await gw.stop();
    }
  });
});

describe('mapped hooks: a GitHub pull_request webhook', () => {
  const MAPPING = {
    id: 'github-pr',
    match: { path: 'github' },
    action: 'agent',
    name: 'GitHub',
    messageTemplate:
      'PR #{{number}} {{action}} in {{repository.full_name}} by {{pull_request.user.login}}: {{pull_request.title}}\n{{pull_request.html_url}}\n\n{{pull_request.body}}',
    sessionKey: 'hook:github:pr-{{pull_request.number}}',
  };
  const HEADERS = {
    'X-GitHub-Event': 'pull_request',
    'X-GitHub-Delivery': '7d2f4c90-b9a1-11f0-8e4b-3c1a9e5d27f6',
    'X-GitHub-Hook-ID': '498120377',
    'X-GitHub-Hook-Installation-Target-Type': 'repository',
    'X-GitHub-Hook-Installation-Target-ID': '762305114',
    'User-Agent': 'GitHub-Hookshot/8e1d0c4',
  };
  const payload = readJsonFixture('github-pull-request-opened.json');
  const prBody = stringAt(objectAt(payload, 'pull_request'), 'body');
  let gw: MappedGateway;

  before(async () => {
    gw = await startMappedGateway(
      baseConfig({
        hooks: { enabled: true, token: HOOK_TOKEN, allowedSessionKeyPrefixes: ['hook:'], mappings: [MAPPING] },
      }),
    );
  });
  after(() => gw?.stop());

  it('turns the webhook into an agent run with the expected message and session key', async () => {
    const run = await gw.runOf(await post(gw.port, '/hooks/github', payload, { headers: HEADERS }));
    assert.equal(
      run.message,
      'PR #318 opened in tidewater-labs/harbor-scheduler by kestrel-dev: Retry berth allocation when the tide table lags\n' +
        'https://github.com/tidewater-labs/harbor-scheduler/pull/318\n\n' +
        prBody,
    );
    assert.ok(prBody.startsWith('Berth allocation failed outright'), 'the fixture body is the one expected');
    assert.equal(run.sessionKey, 'hook:github:pr-318');
    assert.equal(run.name, 'GitHub');
    assert.equal(run.agentId, 'main');
  });

  it('runs it with the echo model and posts "Hook GitHub: …" to the main session', async () => {
    const run = await gw.runOf(await post(gw.port, '/hooks/github', payload, { headers: HEADERS }));
    const done = await gw.waitForRun(run.id);
    assert.equal(done.state, 'succeeded', done.error ?? '');
    assert.match(done.reply ?? '', /PR #318 opened in tidewater-labs\/harbor-scheduler/);
    // Every GitHub run (the previous test's too) posts exactly one summary to the main session.
    const runs = (await gw.gateway.store.listRuns({ limit: 10_000 })).filter((r) => r.name === 'GitHub');
    for (const r of runs) assert.equal((await gw.waitForRun(r.id)).state, 'succeeded');
    let summaries: string[] = [];
    await until(async () => {
      const events = await gw.gateway.store.listSystemEvents({ limit: 10_000 });
      summaries = events
        .filter((e) => e.sessionKey === 'agent:main:main' && e.text.startsWith('Hook GitHub: '))
        .map((e) => e.text);
      return summaries.length === runs.length;
    }, 'one run summary per run in the main session');
    for (const text of summaries)
      assert.match(text, /^Hook GitHub: .*PR #318 opened in tidewater-labs\/harbor-scheduler/);
    const transcript = await gw.gateway.store.readTranscript('hook:github:pr-318', { limit: 100 });
    assert.ok(
      transcript.some((e) => e.role === 'user' && e.content.includes('Retry berth allocation')),
      'the session holds the prompt',
    );
    assert.ok(
      transcript.some((e) => e.role === 'assistant' && e.content === done.reply),
      'and the reply',
    );
  });
});
