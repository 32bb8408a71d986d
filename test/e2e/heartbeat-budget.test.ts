/**
 * An agent's heartbeat turns spend its `tokensPerDay` too: once its runs and turns have spent it,
 * its `now` wakes wait for the periodic heartbeat instead of paying for a turn each, and their
 * events stay pending (never dropped); a larger budget (a reload) lets the next one through.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { readConfig } from '../../src/config/index.js';
import { createFakeOpenAi } from '../fakes/fake-openai.js';
import type { FakeServer } from '../fakes/create-fake-server.js';
import { post } from '../helpers/http-client.js';
import { startTestGateway, type TestGateway } from '../helpers/in-process-gateway.js';
import { baseConfig, type ConfigDoc } from '../helpers/temp-config.js';

const MAIN = 'agent:main:main';

describe("heartbeat turns under an agent's tokensPerDay", () => {
  let fake: FakeServer;
  let gw: TestGateway;
  let calls = 0;
  const config = (tokensPerDay: number): ConfigDoc =>
    baseConfig({
      models: { providers: { fake: { api: 'openai', baseUrl: `${fake.url}/v1`, apiKey: 'sk' } } },
      agents: {
        // A periodic heartbeat exists (hourly), so a wake over budget has a turn to wait for.
        defaults: { model: 'fake/m', heartbeat: { every: '1h' } },
        list: [{ id: 'main', default: true, budget: { tokensPerDay } }],
      },
    });
  const pending = async (): Promise<number> => (await gw.gateway.store.listPendingEvents(MAIN, { limit: 10 })).length;
  /** Posts a `now` wake and waits up to `ms` for it to be consumed: whether it was. */
  const wake = async (text: string, ms: number): Promise<boolean> => {
    assert.equal((await post(gw.port, '/hooks/wake', { text, mode: 'now' })).status, 200);
    for (const end = Date.now() + ms; Date.now() < end; await sleep(20)) if ((await pending()) === 0) return true;
    return (await pending()) === 0;
  };

  before(async () => {
    // Every answer reports 10 + 5 tokens, as the Chat Completions API does.
    fake = await createFakeOpenAi({
      apiKey: 'sk',
      reply: () => {
        calls++;
        return 'HEARTBEAT_OK';
      },
    });
    gw = await startTestGateway(config(40));
  });
  after(async () => {
    await gw?.stop();
    await fake?.close();
  });

  it('gives now wakes their turns until the turns spent the budget, then leaves their events pending', async () => {
    let consumed = 0;
    while (await wake(`door ${consumed}`, 5000)) {
      consumed++;
      assert.ok(consumed <= 3, 'at 15 tokens a turn, a budget of 40 is spent within three turns');
    }
    const spent = (await gw.gateway.store.readBudgetUsage({ agents: { main: { tokensPerDay: 40 } }, hooks: {} }))
      .agents['main']!.tokens;
    assert.ok(spent >= 40, `turns spent ${spent} tokens before a wake was left waiting`);
    const before = calls;
    await sleep(1000);
    assert.equal(calls, before, 'no model call for the waiting wake');
    assert.equal(await pending(), 1, 'its event is pending, not dropped');
    assert.equal(await wake('door again', 1000), false, 'the next now wake waits too');
    assert.equal(await pending(), 2);
  });

  it('lets the next now wake through once the budget allows (a reload raising it), and that turn takes every pending event', async () => {
    writeFileSync(gw.temp.path, JSON.stringify(config(1_000_000)));
    assert.deepEqual(gw.gateway.reload(readConfig(gw.temp.path, {})), [], 'budgets need no restart');
    assert.equal(await wake('door at last', 5000), true);
  });
});

describe('periodic heartbeat turns of an agent whose tokensPerDay is spent, under a stream of now wakes', () => {
  it('still runs the periodic turns, which take the waiting events', async () => {
    let calls = 0;
    const fake = await createFakeOpenAi({
      apiKey: 'sk',
      reply: () => {
        calls++;
        return 'HEARTBEAT_OK';
      },
    });
    // One turn (10 + 5 tokens) spends a budget of 10; the periodic heartbeat ticks every second
    // (the config allows a minute at least: the tick is shortened by the runtime's test option).
    const gw = await startTestGateway(
      baseConfig({
        models: { providers: { fake: { api: 'openai', baseUrl: `${fake.url}/v1`, apiKey: 'sk' } } },
        agents: {
          defaults: { model: 'fake/m', heartbeat: { every: '1m' } },
          list: [{ id: 'main', default: true, budget: { tokensPerDay: 10 } }],
        },
      }),
      { runtime: { heartbeatEveryMs: 1000 } },
    );
    try {
      const pending = async (): Promise<number> =>
        (await gw.gateway.store.listPendingEvents(MAIN, { limit: 1000 })).length;
      assert.equal((await post(gw.port, '/hooks/wake', { text: 'first', mode: 'now' })).status, 200);
      for (let i = 0; i < 100 && calls === 0; i++) await sleep(20);
      assert.equal(calls, 1, 'the first now wake got its turn, which spent the budget');
      const before = calls;
      // 3.5 s of now wakes, one every 100 ms: each asks for a turn the budget refuses.
      for (let i = 0, end = Date.now() + 3500; Date.now() < end; i++) {
        assert.equal((await post(gw.port, '/hooks/wake', { text: `door ${i}`, mode: 'now' })).status, 200);
        await sleep(100);
      }
      assert.ok(calls - before >= 2, `periodic turns ran during the stream: ${calls - before}`);
      for (let i = 0; i < 100 && (await pending()) > 0; i++) await sleep(20);
      assert.equal(await pending(), 0, 'the next periodic turn took every waiting event');
    } finally {
      await gw.stop();
      await fake.close();
    }
  });
});
