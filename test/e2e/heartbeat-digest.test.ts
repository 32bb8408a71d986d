/**
 * A flood of 10,000 pending events costs at most two model turns: the heartbeat digests the
 * backlog (counts by hook, kinds with a sample, the newest) and consumes all of it at once. A flood
 * of `now` wakes that goes on arriving pays a turn per `heartbeat.floodPause`, not one per model call.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { createIds } from '../../src/common/ids.js';
import { createFakeOpenAi } from '../fakes/fake-openai.js';
import type { FakeServer } from '../fakes/create-fake-server.js';
import { post } from '../helpers/http-client.js';
import { startTestGateway, type TestGateway } from '../helpers/in-process-gateway.js';
import { baseConfig, HOOK_TOKEN } from '../helpers/temp-config.js';

const EVENTS = 10_000;

/** A model that acknowledges every heartbeat and keeps each prompt it was sent. */
function recordingModel(prompts: string[]): Promise<FakeServer> {
  return createFakeOpenAi({
    apiKey: 'sk',
    reply: (b) => {
      prompts.push(String(b.messages?.at(-1)?.content ?? ''));
      return 'HEARTBEAT_OK';
    },
  });
}

describe('heartbeat over a flood of events', () => {
  let fake: FakeServer;
  let gw: TestGateway;
  after(async () => {
    await gw?.stop();
    await fake?.close();
  });

  it('consumes a 10,000-event backlog in at most two model turns, every event marked consumed', async () => {
    const prompts: string[] = [];
    fake = await recordingModel(prompts);
    gw = await startTestGateway(
      baseConfig({
        models: { providers: { fake: { api: 'openai', baseUrl: `${fake.url}/v1`, apiKey: 'sk' } } },
        agents: { list: [{ id: 'main', default: true }], defaults: { model: 'fake/m', heartbeat: { every: 0 } } },
      }),
    );
    const ids = createIds();
    const source = (hook: string) => ({ hook, external: true, allowUnsafeExternalContent: false });
    const events = Array.from({ length: EVENTS }, (_, i) => ({
      id: ids.next(),
      agentId: 'main',
      sessionKey: 'agent:main:main',
      mode: 'next-heartbeat' as const,
      createdAt: Date.now(),
      text: i % 10 === 0 ? `Build ${i} failed on main` : `New email ${i} from newsletter@example.com: weekly digest`,
      source: source(i % 10 === 0 ? 'ci' : 'gmail'),
    }));
    for (let i = 0; i < EVENTS; i += 1000)
      await gw.gateway.store.recordActions({ events: events.slice(i, i + 1000), runs: [], idempotency: null });
    const res = await post(
      gw.port,
      '/hooks/wake',
      { text: 'Door opened', mode: 'now' },
      { headers: { authorization: `Bearer ${HOOK_TOKEN}` } },
    );
    assert.equal(res.status, 200);
    for (
      let i = 0;
      i < 500 && (await gw.gateway.store.listPendingEvents('agent:main:main', { limit: 1 })).length > 0;
      i++
    )
      await sleep(20);
    assert.deepEqual(
      await gw.gateway.store.listPendingEvents('agent:main:main', { limit: 1 }),
      [],
      'the whole backlog was consumed',
    );
    assert.ok(prompts.length >= 1 && prompts.length <= 2, `model turns: ${prompts.length}`);
    const digest = prompts[0]!;
    assert.match(digest, /10001 system events arrived/);
    assert.match(digest, /By source: gmail 9000, ci 1000, wake 1\./);
    assert.match(digest, /\(and 8999 more similar\)/);
    assert.ok(digest.length < 30_000, `the digest is bounded (${digest.length} chars)`);
  });

  it('makes now wakes that keep arriving after a digest turn wait out the flood pause, then takes them in one turn', async () => {
    let calls = 0;
    const model = await createFakeOpenAi({
      apiKey: 'sk',
      delayMs: 100,
      reply: () => {
        calls++;
        return 'HEARTBEAT_OK';
      },
    });
    const flooded = await startTestGateway(
      baseConfig({
        models: { providers: { fake: { api: 'openai', baseUrl: `${model.url}/v1`, apiKey: 'sk' } } },
        agents: {
          list: [{ id: 'main', default: true }],
          defaults: { model: 'fake/m', heartbeat: { every: 0, floodPause: '1500ms' } },
        },
      }),
    );
    try {
      const pending = async (): Promise<number> =>
        (await flooded.gateway.store.listPendingEvents('agent:main:main', { limit: 1 })).length;
      const wake = async (text: string, mode: 'now' | 'next-heartbeat'): Promise<void> => {
        const res = await post(
          flooded.port,
          '/hooks/wake',
          { text, mode },
          { headers: { authorization: `Bearer ${HOOK_TOKEN}` } },
        );
        assert.equal(res.status, 200);
      };
      // More than one prompt holds, so the first turn is a digest.
      for (let i = 0; i < 60; i++) await wake(`Backlog ${i}`, 'next-heartbeat');
      const started = Date.now();
      let sent = 0;
      // 1.2 s of now wakes: without the pause a turn would follow each 100 ms model call.
      while (Date.now() - started < 1200) {
        await wake(`Alert ${sent++}`, 'now');
        await sleep(20);
      }
      assert.equal(calls, 1, 'one turn while the flood arrived: the digest, then the pause');
      for (let i = 0; i < 250 && (await pending()) > 0; i++) await sleep(20);
      assert.equal(await pending(), 0, `all ${60 + sent} events consumed`);
      assert.equal(calls, 2, 'one more turn after the pause took every wake that waited');
    } finally {
      await flooded.stop();
      await model.close();
    }
  });
});

describe('heartbeat digests that cannot show a whole flood', () => {
  const KINDS = 20;
  const PER_KIND = 60;
  let fake: FakeServer | undefined;
  let gw: TestGateway | undefined;
  after(async () => {
    await gw?.stop();
    await fake?.close();
  });

  it('shows an alert sent before 1,200 wakes of 20 kinds, and every kind before its events are consumed', async () => {
    const prompts: string[] = [];
    fake = await recordingModel(prompts);
    gw = await startTestGateway(
      baseConfig({
        hooks: {
          enabled: true,
          token: HOOK_TOKEN,
          mappings: [
            {
              id: 'alerts',
              match: { path: 'alerts' },
              action: 'wake',
              wakeMode: 'next-heartbeat',
              textTemplate: '{{text}}',
            },
            {
              id: 'pager',
              match: { path: 'pager' },
              action: 'wake',
              wakeMode: 'next-heartbeat',
              priority: 'high',
              textTemplate: '{{text}}',
            },
          ],
        },
        models: { providers: { fake: { api: 'openai', baseUrl: `${fake.url}/v1`, apiKey: 'sk' } } },
        agents: {
          list: [{ id: 'main', default: true }],
          defaults: { model: 'fake/m', heartbeat: { every: 0, floodPause: '200ms' } },
        },
      }),
    );
    const wake = async (path: string, text: string, mode?: 'now'): Promise<void> => {
      const res = await post(gw!.port, path, { text, ...(mode === undefined ? {} : { mode }) });
      assert.equal(res.status, 200, res.text);
    };
    await wake('/hooks/alerts', 'Disk full on db-1');
    await wake('/hooks/pager', `Pager: payments down ${'!'.repeat(700)}`);
    const ids = createIds();
    const letters = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
    const flood = Array.from({ length: KINDS * PER_KIND }, (_, i) => ({
      id: ids.next(),
      agentId: 'main',
      sessionKey: 'agent:main:main',
      mode: 'now' as const,
      createdAt: Date.now(),
      text: `${letters[i % KINDS]} job ${i} finished`,
      source: { hook: 'wake', external: true, allowUnsafeExternalContent: false },
    }));
    await gw.gateway.store.recordActions({ events: flood, runs: [], idempotency: null });
    await wake('/hooks/wake', 'go', 'now');
    const pending = async (): Promise<number> =>
      (await gw!.gateway.store.listPendingEvents('agent:main:main', { limit: 1 })).length;
    for (let i = 0; i < 500 && (await pending()) > 0; i++) await sleep(20);
    assert.equal(await pending(), 0, 'every event consumed');
    assert.ok(prompts.length >= 2, `model turns: ${prompts.length}`);
    const first = prompts[0]!;
    assert.match(first, /By source: wake 1201, alerts 1, pager 1\./);
    // The high-priority event first and in full; the alert, rarest, before the flood's kinds.
    assert.ok(first.includes(`Pager: payments down ${'!'.repeat(700)}`), 'the high-priority event in full');
    const alertAt = first.indexOf('Disk full on db-1');
    assert.ok(alertAt > first.indexOf('High priority') && alertAt < first.indexOf('more similar'), 'the alert first');
    assert.match(first, /Not in this digest, and kept for the next heartbeat: events of \d+ other kinds\./);
    // Every kind reached a prompt before its events were consumed.
    const shown = new Set(prompts.flatMap((p) => [...p.matchAll(/([A-T]) job \d+ finished/g)].map((m) => m[1])));
    assert.equal(shown.size, KINDS, `kinds shown: ${[...shown].sort().join('')}`);
  });
});
