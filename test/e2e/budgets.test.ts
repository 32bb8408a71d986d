/** Run budgets end to end: over budget, runs are accepted (202), held queued with the reason, and released later. */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { readConfig } from '../../src/config/index.js';
import type { RunRecord } from '../../src/store/index.js';
import { createFakeOpenAi } from '../fakes/fake-openai.js';
import type { FakeServer } from '../fakes/create-fake-server.js';
import { send } from '../helpers/http-client.js';
import { startTestGateway, type TestGateway } from '../helpers/in-process-gateway.js';
import { metricValue, parseMetrics } from '../helpers/read-metrics.js';
import { baseConfig, GATEWAY_TOKEN, type ConfigDoc } from '../helpers/temp-config.js';

const API_KEY = 'sk-budget-test-key';

describe('run budgets', () => {
  let openai: FakeServer;
  let gw: TestGateway;
  let config: (tokensPerDay: number) => ConfigDoc;
  const runOf = async (id: string): Promise<RunRecord> => (await gw.gateway.store.getRun(id))!;
  const postRun = async (hook: string, n: number): Promise<string> => {
    const r = await send(gw.port, `/hooks/${hook}`, { body: { n } });
    assert.equal(r.status, 202, r.text);
    return String((r.json as { runId: string }).runId);
  };
  const until = async (what: string, check: () => Promise<boolean>, ms = 15_000): Promise<void> => {
    for (const end = Date.now() + ms; Date.now() < end; await sleep(20)) if (await check()) return;
    assert.fail(`timed out waiting for ${what}`);
  };

  before(async () => {
    // Every answer reports 10 + 5 tokens, and takes 300 ms. Summaries wait for the next heartbeat, so
    // every model call is a run.
    openai = await createFakeOpenAi({ apiKey: API_KEY, delayMs: 300 });
    config = (tokensPerDay) =>
      baseConfig({
        models: { providers: { fake: { api: 'openai', baseUrl: `${openai.url}/v1`, apiKey: API_KEY } } },
        agents: {
          list: [{ id: 'main', default: true }],
          defaults: { model: 'fake/m', maxConcurrentRuns: 8, heartbeat: { every: 0 } },
        },
        hooks: {
          mappings: [
            {
              id: 'slow',
              match: { path: 'slow' },
              action: 'agent',
              wakeMode: 'next-heartbeat',
              deliver: false,
              messageTemplate: 'slow {{n}}',
              budget: { maxConcurrentRuns: 1 },
            },
            {
              id: 'metered',
              match: { path: 'metered' },
              action: 'agent',
              wakeMode: 'next-heartbeat',
              deliver: false,
              messageTemplate: 'metered {{n}}',
              budget: { tokensPerDay },
            },
            {
              id: 'capped',
              match: { path: 'capped' },
              action: 'agent',
              wakeMode: 'next-heartbeat',
              deliver: false,
              messageTemplate: 'capped {{n}}',
              waitForCompletion: true,
              budget: { runsPerHour: 1 },
            },
          ],
          maxWaitSeconds: 2,
        },
      });
    gw = await startTestGateway(config(20));
  });
  after(async () => {
    await gw?.stop();
    await openai?.close();
  });

  it("runs a mapping's runs one at a time under maxConcurrentRuns: 1, the others held with the reason", async () => {
    const ids = [await postRun('slow', 1), await postRun('slow', 2), await postRun('slow', 3)];
    let sawHeld = false;
    let maxRunning = 0;
    await until('every slow run to succeed', async () => {
      const runs = await Promise.all(ids.map(runOf));
      maxRunning = Math.max(maxRunning, runs.filter((r) => r.state === 'running').length);
      if (
        runs.some(
          (r) =>
            r.state === 'queued' && /mapping "slow": 1 run running \(maxConcurrentRuns 1\)/.test(r.heldReason ?? ''),
        )
      )
        sawHeld = true;
      return runs.every((r) => r.state === 'succeeded');
    });
    assert.equal(maxRunning, 1, 'never two slow runs at once');
    assert.equal(sawHeld, true, 'the waiting runs were shown as held, with the reason');
    for (const id of ids) assert.equal((await runOf(id)).heldReason, null);
  });

  it("holds runs once a mapping spent its tokensPerDay (from the provider's usage), and releases them when the budget allows", async () => {
    const first = await postRun('metered', 1);
    await until('the first metered run', async () => (await runOf(first)).state === 'succeeded');
    assert.equal((await runOf(first)).tokens, 15, 'prompt_tokens + completion_tokens');
    const second = await postRun('metered', 2);
    await until('the second metered run', async () => (await runOf(second)).state === 'succeeded');
    // 30 tokens spent of 20: the next run is accepted but held.
    const third = await postRun('metered', 3);
    await until('the third run to be shown as held', async () => (await runOf(third)).heldReason !== null);
    const calls = openai.requests.length;
    await sleep(1500);
    const held = await runOf(third);
    assert.equal(held.state, 'queued', 'held durably queued, neither failed nor dropped');
    assert.match(held.heldReason!, /mapping "metered": 30 tokens spent in the last 24 h \(tokensPerDay 20\)/);
    assert.equal(openai.requests.length, calls, 'no model call while held');
    const metrics = await send(gw.port, '/metrics', { method: 'GET', auth: GATEWAY_TOKEN });
    assert.equal(metricValue(parseMetrics(metrics.text), 'hookgate_queue_depth', { queue: 'runs_held' }), 1);

    // Raising the budget (a reload) releases it.
    writeFileSync(gw.temp.path, JSON.stringify(config(1000)));
    assert.deepEqual(gw.gateway.reload(readConfig(gw.temp.path, {})), [], 'budgets need no restart');
    await until('the held run to be released and succeed', async () => (await runOf(third)).state === 'succeeded');
    assert.equal((await runOf(third)).heldReason, null);
  });

  it('tells a caller whose wait ran out while its run was held why it is held', async () => {
    const first = await send(gw.port, '/hooks/capped', { body: { n: 1 } });
    assert.equal(first.status, 200, first.text);
    assert.equal((first.json as { status: string }).status, 'succeeded');
    const second = await send(gw.port, '/hooks/capped', { body: { n: 2 } });
    assert.equal(second.status, 200, second.text);
    const answer = second.json as { ok: boolean; runId: string; status: string; error: string; held: string };
    assert.equal(answer.ok, false);
    assert.equal(answer.status, 'queued');
    assert.equal(answer.error, 'wait_timeout');
    assert.match(answer.held, /mapping "capped": 1 run started in the last hour \(runsPerHour 1\)/);
    assert.equal((await runOf(answer.runId)).state, 'queued', 'the run itself stays queued');
  });
});
