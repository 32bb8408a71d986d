/**
 * `hookgate status` and `hookgate runs --state`, through the real bundle, reading the store
 * beside a gateway that is running (in this process) with real traffic behind it.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { systemClock } from '../../src/common/clock.js';
import { waitForRun } from '../../src/runtime/wait-for-run.js';
import { createFakeOpenAi } from '../fakes/fake-openai.js';
import type { FakeServer } from '../fakes/create-fake-server.js';
import { runHookgate, type CliResult } from '../helpers/gateway-process.js';
import { post } from '../helpers/http-client.js';
import { startTestGateway, type TestGateway } from '../helpers/in-process-gateway.js';
import { dropSchema, postgresUnavailable, uniqueSchema, POSTGRES_URL } from '../helpers/store-fixture.js';
import { baseConfig, createTempConfig, type ConfigDoc } from '../helpers/temp-config.js';

const out = (r: CliResult): string => `exit ${r.code}\nstdout:\n${r.stdout}\nstderr:\n${r.stderr}`;

/** A gateway with one succeeded run (echo), one failed run (a provider refusing its key) and a pending wake. */
async function startWithTraffic(
  store: ConfigDoc['store'],
  openai: FakeServer,
): Promise<{ g: TestGateway; succeeded: string; failed: string }> {
  const config = baseConfig({
    // Budgets large enough to hold nothing: status reports what each key used.
    agents: {
      defaults: { model: 'echo/echo', heartbeat: { every: 0 } },
      list: [{ id: 'main', default: true, budget: { runsPerHour: 60, tokensPerDay: 1000 } }],
    },
    // The fake knows another key: every call is a 401, which fails the run at once.
    models: { providers: { bad: { api: 'openai', baseUrl: `${openai.url}/v1`, apiKey: 'sk-revoked' } } },
  });
  config['store'] = store;
  const g = await startTestGateway(config);
  const ok = await post(g.port, '/hooks/agent', { message: 'fine', deliver: false, wakeMode: 'next-heartbeat' });
  const bad = await post(g.port, '/hooks/agent', {
    message: 'doomed',
    model: 'bad/gpt-test',
    deliver: false,
    wakeMode: 'next-heartbeat',
  });
  assert.equal((await post(g.port, '/hooks/wake', { text: 'disk almost full', mode: 'next-heartbeat' })).status, 200);
  const ids = [ok, bad].map((r) => (r.json as { runId: string }).runId);
  const states = [];
  for (const id of ids)
    states.push((await waitForRun({ store: g.gateway.store, clock: systemClock }, id, 10_000)).status);
  assert.deepEqual(states, ['succeeded', 'failed']);
  return { g, succeeded: ids[0]!, failed: ids[1]! };
}

describe('hookgate status and runs --state beside a running gateway (SQLite)', () => {
  let openai: FakeServer;
  let g: TestGateway;
  let succeeded: string;
  let failed: string;
  before(async () => {
    openai = await createFakeOpenAi({ apiKey: 'sk-live' });
    ({ g, succeeded, failed } = await startWithTraffic({ driver: 'sqlite', path: 'state/hookgate.db' }, openai));
  });
  after(async () => {
    await g?.stop();
    await openai?.close();
  });

  it('status prints queue depths, the oldest pending age, runs by state and the store size', async () => {
    const r = await runHookgate(['status', '--config', g.temp.path]);
    assert.equal(r.code, 0, out(r));
    assert.match(r.stdout, /^ {2}runs queued +0$/m);
    assert.match(r.stdout, /^ {2}runs running +0$/m);
    // The wake and both run summaries wait for a heartbeat (periodic heartbeats are off).
    assert.match(r.stdout, /^ {2}events pending +3 {2}oldest \d+s \(since \d{4}-\d\d-\d\dT/m);
    assert.match(r.stdout, /^ {2}deliveries pending +0$/m);
    assert.match(r.stdout, /^Runs by state: queued 0, running 0, succeeded 1, failed 1, timed_out 0 \(2 in all\)$/m);
    assert.match(
      r.stdout,
      /^Budgets \(used \/ limit\):\n {2}agent "main" +runs this hour 2 \/ 60, tokens in 24 h 0 \/ 1,000$/m,
    );
    assert.match(
      r.stdout,
      new RegExp(
        `^Store: sqlite ${g.temp.storePath.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}, [\\d.]+ KiB \\(database [\\d.]+ KiB, wal [\\d.]+ (KiB|MiB|B)\\)$`,
        'm',
      ),
    );
  });

  it('status --json carries the same numbers', async () => {
    const r = await runHookgate(['status', '--json', '--config', g.temp.path]);
    assert.equal(r.code, 0, out(r));
    const s = JSON.parse(r.stdout) as {
      queues: { pendingEvents: number; oldestPendingEventAt: number };
      runs: Record<string, number>;
      size: { totalBytes: number };
    };
    assert.equal(s.queues.pendingEvents, 3);
    assert.ok(s.queues.oldestPendingEventAt > 0);
    assert.deepEqual(s.runs, { queued: 0, running: 0, succeeded: 1, failed: 1, timed_out: 0 });
    assert.ok(s.size.totalBytes > 0);
    const b = (JSON.parse(r.stdout) as { budgets: { set: unknown; used: unknown } }).budgets;
    assert.deepEqual(b, {
      set: { agents: { main: { runsPerHour: 60, tokensPerDay: 1000 } }, hooks: {} },
      used: { agents: { main: { started: 2, tokens: 0, running: 0 } }, hooks: {} },
    });
  });

  it('runs --state failed lists only failed runs, then the count per state', async () => {
    const r = await runHookgate(['runs', '--state', 'failed', '--config', g.temp.path]);
    assert.equal(r.code, 0, out(r));
    assert.match(r.stdout, new RegExp(`^${failed}  failed`, 'm'));
    assert.match(r.stdout, /error: .*401/);
    assert.doesNotMatch(r.stdout, new RegExp(succeeded));
    const lines = r.stdout.trimEnd().split('\n');
    assert.equal(lines.at(-1), 'Runs by state: queued 0, running 0, succeeded 1, failed 1, timed_out 0 (2 in all)');
  });

  it('runs --state with no match says so and still counts', async () => {
    const r = await runHookgate(['runs', '--state', 'timed_out', '--config', g.temp.path]);
    assert.equal(r.code, 0, out(r));
    assert.equal(
      r.stdout,
      'No runs in state timed_out.\nRuns by state: queued 0, running 0, succeeded 1, failed 1, timed_out 0 (2 in all)\n',
    );
  });

  it('runs --state refuses an unknown state with the valid ones (exit 2)', async () => {
    const r = await runHookgate(['runs', '--state', 'done', '--config', g.temp.path]);
    assert.equal(r.code, 2, out(r));
    assert.match(r.stderr, /--state must be one of queued, running, succeeded, failed, timed_out/);
  });

  it('--state is refused on any command but runs (exit 2)', async () => {
    const r = await runHookgate(['status', '--state', 'failed', '--config', g.temp.path]);
    assert.equal(r.code, 2, out(r));
    assert.match(r.stderr, /--state applies to "runs" only/);
  });

  it('status says so when no gateway has created the store yet', async () => {
    const fresh = createTempConfig(baseConfig());
    try {
      const r = await runHookgate(['status', '--config', fresh.path]);
      assert.equal(r.code, 0, out(r));
      assert.match(r.stdout, /^No store yet \(sqlite .*\): no gateway has run with this config\.$/m);
    } finally {
      fresh.cleanup();
    }
  });
});

describe('hookgate status beside a running gateway (PostgreSQL)', async () => {
  const why = await postgresUnavailable();
  if (why !== null) {
    it('needs PostgreSQL', { skip: why }, () => undefined);
    process.stderr.write(`SKIPPED: hookgate status on PostgreSQL: ${why}\n`);
    return;
  }
  const schema = uniqueSchema();
  let openai: FakeServer;
  let g: TestGateway;
  before(async () => {
    openai = await createFakeOpenAi({ apiKey: 'sk-live' });
    ({ g } = await startWithTraffic({ driver: 'postgres', url: POSTGRES_URL, schema }, openai));
  });
  after(async () => {
    await g?.stop();
    await openai?.close();
    await dropSchema(schema);
  });

  it('prints the same report, sized by pg_total_relation_size of each table', async () => {
    const r = await runHookgate(['status', '--config', g.temp.path]);
    assert.equal(r.code, 0, out(r));
    assert.match(r.stdout, /^Runs by state: queued 0, running 0, succeeded 1, failed 1, timed_out 0 \(2 in all\)$/m);
    assert.match(r.stdout, /^ {2}events pending +3 {2}oldest/m);
    assert.match(r.stdout, /^ {2}agent "main" +runs this hour 2 \/ 60, tokens in 24 h 0 \/ 1,000$/m);
    assert.match(
      r.stdout,
      new RegExp(
        `^Store: postgres schema ${schema}, [\\d.]+ (KiB|MiB) \\(.*runs [\\d.]+ KiB.*system_events [\\d.]+ KiB`,
        'm',
      ),
    );
  });
});
