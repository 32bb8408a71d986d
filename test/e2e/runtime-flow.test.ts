import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createLog } from '../../src/common/log.js';
import { readConfig } from '../../src/config/index.js';
import { startGateway, type Gateway } from '../../src/main.js';
import type { NewDelivery, RunRecord } from '../../src/store/index.js';
import type { FakeServer } from '../fakes/create-fake-server.js';
import { createFakeOpenAi, openAiError } from '../fakes/fake-openai.js';

const TOKEN = 'runtime-flow-hook-token';

interface Harness {
  gateway: Gateway;
  fake: FakeServer;
  delivered: NewDelivery[];
  dir: string;
  post(path: string, body: unknown): Promise<{ status: number; json: Record<string, unknown> }>;
  waitForRun(id: string, timeoutMs?: number): Promise<RunRecord>;
  lastUserMessage(i?: number): string;
  close(): Promise<void>;
}

/** Replies `HEARTBEAT_OK` to heartbeats unless told otherwise, and echoes anything else. */
let heartbeatReply = 'HEARTBEAT_OK';

async function startHarness(hooks: Record<string, unknown> = {}, workspaceAgents?: string): Promise<Harness> {
  const fake = await createFakeOpenAi({
    apiKey: 'sk-fake',
    reply: (b) => {
      const last = String(b.messages?.at(-1)?.content ?? '');
      if (last.startsWith('Heartbeat.')) return heartbeatReply;
      return last.includes('answer with an ack') ? 'HEARTBEAT_OK' : `Reviewed: ${last.length} chars`;
    },
  });
  const dir = mkdtempSync(join(tmpdir(), 'hookgate-runtime-'));
  if (workspaceAgents !== undefined) writeFileSync(join(dir, 'AGENTS.md'), workspaceAgents);
  writeFileSync(
    join(dir, 'hookgate.json'),
    JSON.stringify({
      gateway: { logLevel: 'silent' },
      hooks: { enabled: true, token: TOKEN, ...hooks },
      models: { providers: { fake: { api: 'openai', baseUrl: `${fake.url}/v1`, apiKey: 'sk-fake' } } },
      agents: { defaults: { model: 'fake/gpt-test', heartbeat: { every: 0 } }, list: [{ id: 'main', workspace: '.' }] },
    }),
  );
  const delivered: NewDelivery[] = [];
  const gateway = await startGateway(readConfig(join(dir, 'hookgate.json'), {}), {
    port: 0,
    log: createLog({ level: 'silent' }),
    delivery: { deliver: (d) => delivered.push(d) },
    runtime: { coalesceMs: 20, pollMs: 100 },
  });
  const base = `http://127.0.0.1:${gateway.port}`;
  return {
    gateway,
    fake,
    delivered,
    dir,
    async post(path, body) {
      const res = await fetch(base + path, {
        method: 'POST',
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      return { status: res.status, json: (await res.json()) as Record<string, unknown> };
    },
    async waitForRun(id, timeoutMs = 5000) {
      const until = Date.now() + timeoutMs;
      for (;;) {
        const run = await gateway.store.getRun(id);
        if (run !== null && run.state !== 'queued' && run.state !== 'running') return run;
        if (Date.now() > until) throw new Error(`run ${id} still ${run?.state}`);
        await sleep(20);
      }
    },
    lastUserMessage(i = -1) {
      const body = fake.requests.at(i)!.body as { messages: Array<{ content: string }> };
      return body.messages.at(-1)!.content;
    },
    async close() {
      await gateway.close();
      await fake.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function until(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 5000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

describe('runtime: an agent hook end to end', () => {
  let h: Harness;
  before(async () => {
    heartbeatReply = 'HEARTBEAT_OK';
    h = await startHarness({}, 'Always answer in English.');
  });
  after(() => h.close());

  it('runs the hook through the model, posts the summary, runs a heartbeat, and delivers only real replies', async () => {
    const { status, json } = await h.post('/hooks/agent', {
      message: 'Review PR #12: fix the login bug',
      name: 'GitHub',
    });
    assert.equal(status, 202);
    const run = await h.waitForRun(String(json['runId']));
    assert.equal(run.state, 'succeeded');
    assert.equal(run.modelUsed, 'fake/gpt-test');
    assert.match(run.reply ?? '', /^Reviewed: /);
    assert.ok(run.startedAt !== null && run.finishedAt !== null && run.finishedAt >= run.startedAt);

    // The model received the hook message inside the untrusted-content boundary, and AGENTS.md.
    const runRequest = h.fake.requests.find((r) => JSON.stringify(r.body).includes('Review PR #12'))!;
    const messages = (runRequest.body as { messages: Array<{ role: string; content: string }> }).messages;
    assert.match(messages[0]!.content, /Always answer in English\./);
    const prompt = messages.at(-1)!.content;
    const start = prompt.match(/<<<EXTERNAL_UNTRUSTED_CONTENT id="([0-9a-f]+)">>>/);
    assert.ok(start !== null, prompt);
    assert.ok(prompt.includes(`<<<END_EXTERNAL_UNTRUSTED_CONTENT id="${start[1]}">>>`));
    assert.ok(prompt.indexOf('Review PR #12') > prompt.indexOf(start[0]));

    // The heartbeat (wakeMode now) saw the summary, answered HEARTBEAT_OK, and consumed it.
    await until(async () => (await h.gateway.store.listPendingEvents('agent:main:main')).length === 0, 'the heartbeat');
    const heartbeat = h.fake.requests
      .map((r) => (r.body as { messages: Array<{ content: string }> }).messages.at(-1)!.content)
      .find((c) => c.startsWith('Heartbeat.'))!;
    assert.match(heartbeat, /Hook GitHub: Reviewed: /);
    assert.match(heartbeat, /Current time: \d{4}-\d\d-\d\dT/);
    const events = await h.gateway.store.listSystemEvents();
    assert.equal(events.filter((e) => e.text.startsWith('Hook GitHub: ')).length, 1);

    // The run's reply is handed to delivery; the heartbeat ack is not.
    assert.equal(h.delivered.length, 1);
    assert.equal(h.delivered[0]!.runId, run.id);
    const recorded = await h.gateway.store.listDeliveries();
    assert.deepEqual(
      recorded.map((d) => [d.state, d.runId]),
      [['pending', run.id]],
    );
  });

  it('records a heartbeat reply that needs attention as a pending delivery to the last route', async () => {
    heartbeatReply = 'Alice needs an answer about lunch.';
    try {
      const before = (await h.gateway.store.listDeliveries({ limit: 100 })).length;
      const handedBefore = h.delivered.length;
      const { status } = await h.post('/hooks/wake', { text: 'New mail from Alice', mode: 'now' });
      assert.equal(status, 200);
      await until(
        async () => (await h.gateway.store.listDeliveries({ limit: 100 })).length === before + 1,
        'the heartbeat delivery',
      );
      // The delivery is handed to the worker only after its turn is committed, so a reader of the store can see it first.
      await until(() => h.delivered.length === handedBefore + 1, 'the heartbeat delivery handed to the worker');
      assert.equal(h.delivered.at(-1)!.text, 'Alice needs an answer about lunch.');
      const [latest] = await h.gateway.store.listDeliveries({ limit: 1 });
      assert.equal(latest!.runId, null);
      assert.equal(latest!.channel, 'last');
      assert.equal(latest!.text, 'Alice needs an answer about lunch.');
      assert.match(h.lastUserMessage(), /New mail from Alice/);
    } finally {
      heartbeatReply = 'HEARTBEAT_OK';
    }
  });

  it('sends one chat message for a delivered run: the heartbeat its summary asks for delivers nothing', async () => {
    heartbeatReply = 'GitHub PR #14 was reviewed: see the reply above.';
    try {
      const handedBefore = h.delivered.length;
      const { json } = await h.post('/hooks/agent', { message: 'Review PR #14', name: 'GitHub', wakeMode: 'now' });
      const run = await h.waitForRun(String(json['runId']));
      assert.equal(run.state, 'succeeded');
      await until(
        async () => (await h.gateway.store.listPendingEvents('agent:main:main')).length === 0,
        'the heartbeat',
      );
      // The heartbeat ran (the main session knows) and its reply is in the transcript, not in a chat.
      const transcript = await h.gateway.store.readTranscript('agent:main:main', { limit: 2 });
      assert.equal(transcript.at(-1)!.content, 'GitHub PR #14 was reviewed: see the reply above.');
      assert.deepEqual(
        h.delivered.slice(handedBefore).map((d) => d.runId),
        [run.id],
      );
      // The same reply to a run that delivered nothing is news, and goes to the chat.
      const quiet = await h.post('/hooks/agent', { message: 'Review PR #15', deliver: false, wakeMode: 'now' });
      assert.equal((await h.waitForRun(String(quiet.json['runId']))).state, 'succeeded');
      await until(() => h.delivered.length === handedBefore + 2, 'the heartbeat delivery');
      assert.equal(h.delivered.at(-1)!.runId, null);
    } finally {
      heartbeatReply = 'HEARTBEAT_OK';
    }
  });

  it('does not deliver when deliver is false, nor a run reply that is only an ack', async () => {
    const before = h.delivered.length;
    const a = await h.post('/hooks/agent', { message: 'quiet', deliver: false, wakeMode: 'next-heartbeat' });
    assert.equal((await h.waitForRun(String(a.json['runId']))).state, 'succeeded');
    const b = await h.post('/hooks/agent', { message: 'nothing new: answer with an ack', wakeMode: 'next-heartbeat' });
    const run = await h.waitForRun(String(b.json['runId']));
    assert.equal(run.reply, 'HEARTBEAT_OK');
    assert.equal(h.delivered.length, before);
  });

  it('a next-heartbeat run leaves its summary pending', async () => {
    const { json } = await h.post('/hooks/agent', {
      message: 'later please',
      name: 'Later',
      wakeMode: 'next-heartbeat',
      deliver: false,
    });
    await h.waitForRun(String(json['runId']));
    await sleep(100);
    const pending = await h.gateway.store.listPendingEvents('agent:main:main');
    assert.ok(pending.some((e) => e.text.startsWith('Hook Later: ')));
  });
});

describe('runtime: failures, timeouts and sessions', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness({ allowRequestSessionKey: true, allowedSessionKeyPrefixes: ['hook:'] });
  });
  after(() => h.close());

  it('ends a run that outlives timeoutSeconds as timed_out, with a summary saying so', async () => {
    h.fake.script.push({ status: 200, body: {}, delayMs: 3000 });
    const { json } = await h.post('/hooks/agent', {
      message: 'slow',
      name: 'Slow',
      timeoutSeconds: 0.3,
      wakeMode: 'next-heartbeat',
    });
    const run = await h.waitForRun(String(json['runId']));
    assert.equal(run.state, 'timed_out');
    assert.match(run.error ?? '', /timed out after 0.3 s/);
    const events = await h.gateway.store.listSystemEvents();
    assert.ok(events.some((e) => e.text === 'Hook Slow (timed_out): timed out after 0.3 s'));
  });

  it('says which failure was being retried when a run ran out of time', async () => {
    h.fake.script.push(openAiError(503, 'The engine is currently overloaded.', 'server_error'));
    h.fake.script.push({ status: 200, body: {}, delayMs: 3000 });
    const { json } = await h.post('/hooks/agent', {
      message: 'busy',
      name: 'Busy',
      timeoutSeconds: 1.5,
      wakeMode: 'next-heartbeat',
    });
    const run = await h.waitForRun(String(json['runId']));
    assert.equal(run.state, 'timed_out');
    assert.match(
      run.error ?? '',
      /^timed out after 1\.5 s \(last failure: openai 503: The engine is currently overloaded\.\)$/,
    );
  });

  it('fails a run on a provider 4xx with the provider message', async () => {
    h.fake.script.push(
      openAiError(400, "This model's maximum context length is 8192 tokens.", 'invalid_request_error'),
    );
    const { json } = await h.post('/hooks/agent', { message: 'too long', name: 'Big', wakeMode: 'next-heartbeat' });
    const run = await h.waitForRun(String(json['runId']));
    assert.equal(run.state, 'failed');
    assert.match(run.error ?? '', /maximum context length/);
    const events = await h.gateway.store.listSystemEvents();
    assert.ok(events.some((e) => e.text.startsWith('Hook Big (failed): openai 400: ')));
  });

  it('carries conversation history across runs that share a session key, in order', async () => {
    const ids: string[] = [];
    for (const m of ['first', 'second', 'third']) {
      const { json } = await h.post('/hooks/agent', {
        message: m,
        sessionKey: 'hook:thread-1',
        wakeMode: 'next-heartbeat',
        deliver: false,
      });
      ids.push(String(json['runId']));
    }
    const runs = await Promise.all(ids.map((id) => h.waitForRun(id)));
    assert.ok(runs.every((r) => r.state === 'succeeded'));
    for (let i = 1; i < runs.length; i++)
      assert.ok(runs[i]!.startedAt! >= runs[i - 1]!.finishedAt!, 'one at a time, in order');
    const third = h.fake.requests.find((r) => JSON.stringify(r.body).includes('third'))!;
    const roles = (third.body as { messages: Array<{ role: string }> }).messages.map((m) => m.role);
    assert.deepEqual(roles, ['system', 'user', 'assistant', 'user', 'assistant', 'user']);
    const transcript = await h.gateway.store.readTranscript('hook:thread-1');
    assert.equal(transcript.length, 6);
  });
});
