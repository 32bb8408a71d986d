import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import Database from 'better-sqlite3';
import { systemClock } from '../../src/common/clock.js';
import { createLog } from '../../src/common/log.js';
import { readConfig } from '../../src/config/index.js';
import { startGateway, type Gateway } from '../../src/main.js';
import { waitForRun } from '../../src/runtime/wait-for-run.js';
import { createFakeOpenAi } from '../fakes/fake-openai.js';
import { createFakeTelegram, type FakeTelegram } from '../fakes/fake-telegram.js';
import type { FakeServer } from '../fakes/create-fake-server.js';
import { post, send } from '../helpers/http-client.js';
import { startTestGateway, type TestGateway } from '../helpers/in-process-gateway.js';
import { metricValue, parseMetrics, type MetricSample } from '../helpers/read-metrics.js';
import { baseConfig, createTempConfig, GATEWAY_TOKEN, HOOK_TOKEN, type TempConfig } from '../helpers/temp-config.js';

const BOT_TOKEN = '123456:metrics-test-bot';
const scrape = (g: TestGateway, auth: string | false = GATEWAY_TOKEN) =>
  send(g.port, '/metrics', { method: 'GET', auth });

describe('GET /metrics after real traffic', () => {
  let g: TestGateway;
  let openai: FakeServer;
  let telegram: FakeTelegram;
  let samples: MetricSample[];
  let contentType: string | undefined;

  before(async () => {
    openai = await createFakeOpenAi({ apiKey: 'sk-metrics', reply: () => 'reviewed' });
    telegram = await createFakeTelegram({ botToken: BOT_TOKEN, chatIds: ['4242'] });
    g = await startTestGateway(
      baseConfig({
        agents: { defaults: { model: 'echo/echo', heartbeat: { every: 0 } }, list: [{ id: 'main', default: true }] },
        models: { providers: { fake: { api: 'openai', baseUrl: `${openai.url}/v1`, apiKey: 'sk-metrics' } } },
        channels: { telegram: { botToken: BOT_TOKEN, baseUrl: telegram.url, defaultTo: '4242' } },
      }),
    );
    assert.equal((await post(g.port, '/hooks/wake', { text: 'disk at 91%', mode: 'next-heartbeat' })).status, 200);
    const echo = await post(g.port, '/hooks/agent', {
      message: 'summarise the alert',
      channel: 'telegram',
      to: '4242',
      wakeMode: 'next-heartbeat',
    });
    const fake = await post(g.port, '/hooks/agent', {
      message: 'review this',
      model: 'fake/gpt-test',
      deliver: false,
      wakeMode: 'next-heartbeat',
    });
    assert.equal(echo.status, 202);
    assert.equal(fake.status, 202);
    for (const r of [echo, fake]) {
      const done = await waitForRun(
        { store: g.gateway.store, clock: systemClock },
        (r.json as { runId: string }).runId,
        10_000,
      );
      assert.equal(done.status, 'succeeded');
    }
    assert.equal((await post(g.port, '/hooks/wake', { text: 'x' }, { auth: 'wrong-token' })).status, 401);
    assert.equal((await post(g.port, '/hooks/guess-7f3a9', { text: 'x' }, { auth: 'wrong-token' })).status, 401);
    const res = await scrape(g);
    assert.equal(res.status, 200);
    contentType = res.headers['content-type'];
    samples = parseMetrics(res.text);
  });
  after(async () => {
    await g.stop();
    await openai.close();
    await telegram.close();
  });

  it('is Prometheus text', () => {
    assert.match(contentType ?? '', /^text\/plain; version=0\.0\.4/);
  });

  it('counts requests by hook and status, unknown hook names as _other', () => {
    assert.equal(metricValue(samples, 'hookgate_requests_total', { hook: 'wake', status: '200' }), 1);
    assert.equal(metricValue(samples, 'hookgate_requests_total', { hook: 'agent', status: '202' }), 2);
    assert.equal(metricValue(samples, 'hookgate_requests_total', { hook: 'wake', status: '401' }), 1);
    assert.equal(metricValue(samples, 'hookgate_requests_total', { hook: '_other', status: '401' }), 1);
    assert.ok(
      !samples.some((s) => Object.values(s.labels).includes('guess-7f3a9')),
      'a caller-chosen name never becomes a label',
    );
  });

  it('counts auth failures', () => {
    assert.equal(metricValue(samples, 'hookgate_auth_failures_total'), 2);
    assert.equal(metricValue(samples, 'hookgate_auth_lockouts_total'), 0);
  });

  it('counts runs by terminal state with a duration histogram', () => {
    assert.equal(metricValue(samples, 'hookgate_runs_finished_total', { state: 'succeeded' }), 2);
    assert.equal(metricValue(samples, 'hookgate_run_duration_seconds_count', { state: 'succeeded' }), 2);
    assert.equal(metricValue(samples, 'hookgate_run_duration_seconds_bucket', { state: 'succeeded', le: '+Inf' }), 2);
  });

  it('counts model calls and the tokens the provider reported, by provider and model', () => {
    assert.ok(
      (metricValue(samples, 'hookgate_model_calls_total', { provider: 'echo', model: 'echo', outcome: 'ok' }) ?? 0) >=
        1,
    );
    assert.equal(
      metricValue(samples, 'hookgate_model_calls_total', { provider: 'fake', model: 'gpt-test', outcome: 'ok' }),
      1,
    );
    // The fake answers usage.prompt_tokens 10 and usage.completion_tokens 5, as the Chat Completions API does.
    assert.equal(
      metricValue(samples, 'hookgate_model_tokens_total', { provider: 'fake', model: 'gpt-test', direction: 'input' }),
      10,
    );
    assert.equal(
      metricValue(samples, 'hookgate_model_tokens_total', { provider: 'fake', model: 'gpt-test', direction: 'output' }),
      5,
    );
  });

  it('counts deliveries by channel and outcome', () => {
    assert.equal(metricValue(samples, 'hookgate_delivery_attempts_total', { channel: 'telegram', outcome: 'sent' }), 1);
    assert.equal(telegram.messages.length, 1);
  });

  it('reports group commits, queue depths and the store size', () => {
    assert.ok((metricValue(samples, 'hookgate_store_commit_batch_size_count') ?? 0) >= 3);
    assert.ok((metricValue(samples, 'hookgate_store_commit_duration_seconds_count') ?? 0) >= 3);
    assert.equal(metricValue(samples, 'hookgate_store_commit_failures_total'), 0);
    assert.equal(metricValue(samples, 'hookgate_queue_depth', { queue: 'runs_queued' }), 0);
    assert.equal(metricValue(samples, 'hookgate_queue_depth', { queue: 'deliveries_pending' }), 0);
    // The wakes asked for the next periodic heartbeat, which is off: their events (and the run summaries) wait.
    assert.ok((metricValue(samples, 'hookgate_queue_depth', { queue: 'events_pending' }) ?? 0) >= 1);
    assert.ok((metricValue(samples, 'hookgate_queue_oldest_age_seconds', { queue: 'events' }) ?? -1) >= 0);
    assert.ok((metricValue(samples, 'hookgate_store_size_bytes', { part: 'database' }) ?? 0) > 0);
  });

  it('reports the background pruner: its first pass, run at start, ended without an error', () => {
    const last = metricValue(samples, 'hookgate_prune_last_success_timestamp_seconds') ?? 0;
    assert.ok(last > Date.now() / 1000 - 120 && last <= Date.now() / 1000, `last success at ${last}`);
    assert.equal(metricValue(samples, 'hookgate_prune_failures_total'), 0);
  });

  it('includes the default process metrics', () => {
    assert.ok(metricValue(samples, 'process_cpu_user_seconds_total') !== undefined);
    assert.ok(samples.some((s) => s.name === 'nodejs_heap_size_total_bytes'));
  });
});

describe('GET /metrics authentication', () => {
  let g: TestGateway;
  let open: TestGateway;
  before(async () => {
    g = await startTestGateway(baseConfig());
    open = await startTestGateway(
      baseConfig({ gateway: { bind: '127.0.0.1', port: 0, logLevel: 'warn', metrics: { public: true } } }),
    );
  });
  after(async () => {
    await g.stop();
    await open.stop();
  });

  it('answers 401 without a token', async () => {
    const res = await scrape(g, false);
    assert.equal(res.status, 401);
    assert.equal((res.json as { code: string }).code, 'metrics_unauthorized');
  });

  it('answers 401 to the hook token', async () => {
    const res = await scrape(g, HOOK_TOKEN);
    assert.equal(res.status, 401);
    assert.equal((res.json as { code: string }).code, 'metrics_unauthorized');
  });

  it('answers 200 to the gateway token as a Bearer token', async () => {
    const res = await scrape(g, GATEWAY_TOKEN);
    assert.equal(res.status, 200);
    assert.match(res.text, /^# HELP /m);
  });

  it('counts refused scrapes as auth failures', async () => {
    const before = metricValue(parseMetrics((await scrape(g)).text), 'hookgate_auth_failures_total') ?? 0;
    await scrape(g, 'not-the-token');
    assert.equal(metricValue(parseMetrics((await scrape(g)).text), 'hookgate_auth_failures_total'), before + 1);
  });

  it('refuses methods other than GET and HEAD', async () => {
    const res = await send(g.port, '/metrics', { method: 'POST', auth: GATEWAY_TOKEN, body: {} });
    assert.equal(res.status, 405);
    assert.equal(res.headers['allow'], 'GET, HEAD');
  });

  it('serves without a token when gateway.metrics.public is true', async () => {
    const res = await scrape(open, false);
    assert.equal(res.status, 200);
    assert.match(res.text, /hookgate_queue_depth/);
  });

  it('keeps one registry per gateway (two gateways in one process count apart)', async () => {
    assert.equal((await post(g.port, '/hooks/wake', { text: 'only on g' })).status, 200);
    const mine = parseMetrics((await scrape(g)).text);
    const theirs = parseMetrics((await scrape(open, false)).text);
    assert.equal(metricValue(mine, 'hookgate_requests_total', { hook: 'wake', status: '200' }), 1);
    assert.equal(metricValue(theirs, 'hookgate_requests_total', { hook: 'wake', status: '200' }), undefined);
  });

  it('answers 401 with a hint when no gateway token is configured and metrics are not public', async () => {
    const bare = await startTestGateway(
      baseConfig({ gateway: { bind: '127.0.0.1', port: 0, logLevel: 'warn', auth: {} } }),
    );
    try {
      const res = await scrape(bare, GATEWAY_TOKEN);
      assert.equal(res.status, 401);
      assert.match((res.json as { error: string }).error, /gateway\.metrics\.public/);
    } finally {
      await bare.stop();
    }
  });
});

describe('GET /readyz and /healthz', () => {
  let temp: TempConfig;
  let gateway: Gateway;
  const ready = () => send(gateway.port, '/readyz', { method: 'GET', auth: false });
  before(async () => {
    temp = createTempConfig(baseConfig());
    // No cache between probes, so each request probes the store now.
    gateway = await startGateway(readConfig(temp.path, {}), {
      port: 0,
      log: createLog({ level: 'silent' }),
      readiness: { cacheMs: 0 },
    });
  });
  after(async () => {
    await gateway.close();
    temp.cleanup();
  });

  it('answers 200 when the store writes and the workers run', async () => {
    const res = await ready();
    assert.equal(res.status, 200);
    assert.deepEqual(res.json, {
      ok: true,
      dispatch: { held: false, draining: { replica: false, fleet: false }, paused: [] },
    });
  });

  it('answers 503 store_unavailable with the reason while the database cannot be written; /healthz stays 200', async () => {
    // Another connection holds SQLite's write lock: the gateway's writes fail as "database is
    // locked" after its busy wait, as they do when a stray process locks the file.
    const holder = new Database(temp.storePath);
    try {
      holder.exec('BEGIN IMMEDIATE');
      const res = await ready();
      assert.equal(res.status, 503);
      const body = res.json as { ok: boolean; code: string; reason: string };
      assert.equal(body.ok, false);
      assert.equal(body.code, 'store_unavailable');
      assert.match(body.reason, /locked|busy/i);
      assert.equal((await send(gateway.port, '/healthz', { method: 'GET', auth: false })).status, 200);
    } finally {
      holder.exec('ROLLBACK');
      holder.close();
    }
    // Writes are not tried again for a short pause after the lock was met (at most 2 s).
    let status = (await ready()).status;
    for (const end = Date.now() + 5000; status !== 200 && Date.now() < end; status = (await ready()).status)
      await sleep(50);
    assert.equal(status, 200, 'ready again once the lock is gone');
  });
});
