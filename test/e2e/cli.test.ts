/**
 * `hookgate events` and `hookgate runs`: read the store offline, newest first, as JSON or text.
 * The store is filled through the real HTTP ingress of an in-process gateway.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { runHookgate } from '../helpers/gateway-process.js';
import { post } from '../helpers/http-client.js';
import { startTestGateway, type TestGateway } from '../helpers/in-process-gateway.js';
import { baseConfig, createTempConfig, GATEWAY_TOKEN, HOOK_TOKEN } from '../helpers/temp-config.js';

interface EventJson {
  id: string;
  text: string;
  mode: string;
  agentId: string;
  sessionKey: string;
  createdAt: number;
  source: { hook: string };
}
interface RunJson {
  id: string;
  state: string;
  message: string;
  agentId: string;
  sessionKey: string;
  name: string;
  createdAt: number;
  modelUsed: string | null;
  reply: string | null;
  startedAt: number | null;
  finishedAt: number | null;
}

const UUID_AT_START = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/;
const RUN_STATES = ['queued', 'running', 'succeeded', 'failed', 'timed_out'];

/** Asserts a listing is newest first: creation times never increase down the list. */
function assertNewestFirst(items: ReadonlyArray<{ id: string; createdAt: number }>): void {
  for (let i = 1; i < items.length; i++) {
    assert.ok(items[i - 1]!.createdAt >= items[i]!.createdAt, `item ${i} is not older than item ${i - 1}`);
    // Ids are UUIDv7, time-ordered and monotonic within one process.
    assert.ok(items[i - 1]!.id > items[i]!.id, `id ${i} sorts before id ${i - 1}`);
  }
}

/** Only the wakes posted by this test (run summaries are system events too). */
const wakesOnly = (events: EventJson[]): EventJson[] => events.filter((e) => e.source.hook === 'wake');

describe('CLI: events and runs', () => {
  let gw: TestGateway;
  /** Ids in the order they were accepted (oldest first). */
  const eventIds: string[] = [];
  const eventTexts: string[] = [];
  const runIds: string[] = [];

  before(async () => {
    gw = await startTestGateway(baseConfig({ agents: { list: [{ id: 'main', default: true }, { id: 'ops' }] } }));
    // Runs first: each posts a summary event to the main session when it finishes, so wait for
    // them (bounded) before the wakes, to keep the wakes the newest events.
    for (let i = 0; i < 3; i++) {
      const res = await post(gw.port, '/hooks/agent', {
        message: `cli run ${i}`,
        name: `Job${i}`,
        agentId: i === 1 ? 'ops' : 'main',
      });
      assert.equal(res.status, 202, res.text);
      runIds.push((res.json as { runId: string }).runId);
    }
    const deadline = Date.now() + 15_000;
    while (Date.now() < deadline) {
      const runs = await Promise.all(runIds.map((id) => gw.gateway.store.getRun(id)));
      if (runs.every((r) => r !== null && r.state !== 'queued' && r.state !== 'running')) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    // One at a time, so acceptance order is the order of the requests.
    for (let i = 0; i < 5; i++) {
      const text = `cli event ${i}`;
      const res = await post(gw.port, '/hooks/wake', { text, mode: i % 2 === 0 ? 'now' : 'next-heartbeat' });
      assert.equal(res.status, 200, res.text);
      eventIds.push((res.json as { eventId: string }).eventId);
      eventTexts.push(text);
    }
  });
  after(async () => {
    await gw?.stop();
  });

  const cli = (...args: string[]) =>
    runHookgate([...args, '--config', gw.temp.path], { env: { HOOKGATE_HOME: gw.temp.dir } });

  describe('while the gateway is running', () => {
    it('events --json reads the live store', async () => {
      const result = await cli('events', '--json');
      assert.equal(result.code, 0, result.stderr);
      const events = JSON.parse(result.stdout) as EventJson[];
      assert.deepEqual(
        wakesOnly(events).map((e) => e.id),
        [...eventIds].reverse(),
      );
    });
  });

  describe('offline, after the gateway stopped', () => {
    before(async () => {
      // Stop the server but keep the directory: the CLI reads the store on its own.
      await gw.gateway.close();
    });

    it('events --json --limit N lists the N newest events, newest first, with ids', async () => {
      const all = JSON.parse((await cli('events', '--json', '--limit', '100')).stdout) as EventJson[];
      const result = await cli('events', '--json', '--limit', '3');
      assert.equal(result.code, 0, result.stderr);
      const events = JSON.parse(result.stdout) as EventJson[];
      assert.equal(events.length, 3);
      assert.deepEqual(events, all.slice(0, 3), 'the first N of the full listing');
      assert.deepEqual(
        events.map((e) => e.id),
        eventIds.slice(-3).reverse(),
        'the newest are the last wakes posted',
      );
      assert.deepEqual(
        events.map((e) => e.text),
        eventTexts.slice(-3).reverse(),
      );
      for (const e of events) {
        assert.equal(e.agentId, 'main');
        assert.equal(e.sessionKey, 'agent:main:main');
        assert.equal(typeof e.createdAt, 'number');
      }
      assert.deepEqual(
        events.map((e) => e.mode),
        ['now', 'next-heartbeat', 'now'],
      );
    });

    it('events --json lists every event newest first, the wakes in reverse order of posting', async () => {
      const result = await cli('events', '--json', '--limit', '100');
      assert.equal(result.code, 0, result.stderr);
      const events = JSON.parse(result.stdout) as EventJson[];
      assertNewestFirst(events);
      assert.deepEqual(
        wakesOnly(events).map((e) => e.id),
        [...eventIds].reverse(),
      );
    });

    it('runs --json lists the runs newest first, with ids and resolved fields', async () => {
      const result = await cli('runs', '--json');
      assert.equal(result.code, 0, result.stderr);
      const runs = JSON.parse(result.stdout) as RunJson[];
      assert.deepEqual(
        runs.map((r) => r.id),
        [...runIds].reverse(),
      );
      assertNewestFirst(runs);
      // The runtime may have executed them already; every state is a known one.
      for (const r of runs) assert.ok(RUN_STATES.includes(r.state), r.state);
      assert.deepEqual(
        runs.map((r) => r.message),
        ['cli run 2', 'cli run 1', 'cli run 0'],
      );
      assert.deepEqual(
        runs.map((r) => r.agentId),
        ['main', 'ops', 'main'],
      );
      assert.deepEqual(
        runs.map((r) => r.name),
        ['Job2', 'Job1', 'Job0'],
      );
    });

    it('runs --json shows each echo run succeeded, with timings, the model used and the reply', async () => {
      const runs = JSON.parse((await cli('runs', '--json')).stdout) as RunJson[];
      for (const r of runs) {
        assert.equal(r.state, 'succeeded');
        assert.equal(r.modelUsed, 'echo/echo');
        assert.match(r.reply ?? '', /^\[offline echo model\] /);
        assert.ok(
          r.startedAt !== null && r.finishedAt !== null && r.finishedAt >= r.startedAt && r.startedAt >= r.createdAt,
        );
      }
    });

    it('sessions --json lists the main sessions and each run session', async () => {
      const result = await cli('sessions', '--json');
      assert.equal(result.code, 0, result.stderr);
      const keys = (JSON.parse(result.stdout) as Array<{ key: string }>).map((s) => s.key);
      assert.ok(keys.includes('agent:main:main') && keys.includes('agent:ops:main'), keys.join(' '));
      const runs = JSON.parse((await cli('runs', '--json')).stdout) as RunJson[];
      for (const r of runs) assert.ok(keys.includes(r.sessionKey), r.sessionKey);
    });

    it('session <key> shows the summary of each run on its agent main session', async () => {
      const result = await cli('session', 'agent:ops:main', '--json');
      assert.equal(result.code, 0, result.stderr);
      const view = JSON.parse(result.stdout) as {
        transcript: Array<{ content: string }>;
        pendingEvents: Array<{ text: string }>;
      };
      const seen = [...view.transcript.map((t) => t.content), ...view.pendingEvents.map((e) => e.text)].join('\n');
      assert.match(seen, /Hook Job1: \[offline echo model\]/);
      const text = await cli('session', 'agent:ops:main');
      assert.match(text.stdout, /^agent:ops:main {2}agent ops/);
      assert.match(text.stdout, /Transcript \(last 20\):/);
    });

    it('session exits 1 for an unknown key and 2 without one', async () => {
      assert.equal((await cli('session', 'nope')).code, 1);
      assert.equal((await cli('session')).code, 2);
    });

    it('runs -n 1 --json lists only the newest run', async () => {
      const result = await cli('runs', '-n', '1', '--json');
      assert.equal(result.code, 0, result.stderr);
      assert.deepEqual(
        (JSON.parse(result.stdout) as RunJson[]).map((r) => r.id),
        [runIds.at(-1)],
      );
    });

    it('events prints one text line per event, newest first, each with its id', async () => {
      const all = JSON.parse((await cli('events', '--json', '--limit', '5')).stdout) as EventJson[];
      const result = await cli('events', '--limit', '5');
      assert.equal(result.code, 0, result.stderr);
      const lines = result.stdout.trimEnd().split('\n');
      assert.equal(lines.length, 5, result.stdout);
      lines.forEach((line, i) => {
        assert.ok(line.startsWith(all[i]!.id), `line ${i} starts with id ${all[i]!.id}: ${line}`);
      });
      // The newest lines are the last wakes, with their text.
      assert.ok(lines[0]!.startsWith(eventIds.at(-1)!) && lines[0]!.includes(eventTexts.at(-1)!), lines[0]);
    });

    it('runs prints one entry per run, newest first, with id and state', async () => {
      const result = await cli('runs');
      assert.equal(result.code, 0, result.stderr);
      const heads = result.stdout.split('\n').filter((l) => UUID_AT_START.test(l));
      assert.equal(heads.length, 3, result.stdout);
      heads.forEach((line, i) => {
        assert.ok(line.startsWith(runIds[runIds.length - 1 - i]!), line);
        assert.ok(
          RUN_STATES.some((s) => new RegExp(`\\b${s}\\b`).test(line)),
          `a state on: ${line}`,
        );
      });
    });

    it('never prints the hook token', async () => {
      for (const args of [['events', '--json'], ['runs', '--json'], ['events'], ['runs']]) {
        const result = await cli(...args);
        assert.ok(!result.stdout.includes(HOOK_TOKEN) && !result.stderr.includes(HOOK_TOKEN), args.join(' '));
      }
    });

    for (const bad of ['0', '-1', 'abc', '1.5']) {
      it(`exits 2 for --limit ${bad}`, async () => {
        for (const what of ['events', 'runs']) {
          const result = await cli(what, '--limit', bad);
          assert.equal(result.code, 2, `${what}: ${result.stderr}`);
          assert.match(result.stderr, /--limit/);
          assert.equal(result.stdout, '');
        }
      });
    }
  });
});

describe('CLI: events and runs on an empty installation', () => {
  it('prints [] and exits 0 when no store exists yet', async () => {
    const temp = createTempConfig(baseConfig({ gateway: { port: 0, auth: { token: GATEWAY_TOKEN } } }));
    try {
      for (const what of ['events', 'runs']) {
        const result = await runHookgate([what, '--json', '--config', temp.path], { env: { HOOKGATE_HOME: temp.dir } });
        assert.equal(result.code, 0, result.stderr);
        assert.deepEqual(JSON.parse(result.stdout), []);
      }
    } finally {
      temp.cleanup();
    }
  });

  it('exits non-zero and names the path when the config is invalid', async () => {
    const temp = createTempConfig(baseConfig({ hooks: { enabled: true, token: HOOK_TOKEN, tokn: 'x' } }));
    try {
      const result = await runHookgate(['events', '--json', '--config', temp.path], {
        env: { HOOKGATE_HOME: temp.dir },
      });
      assert.notEqual(result.code, 0);
      assert.match(result.stderr, /hooks\.tokn/);
    } finally {
      temp.cleanup();
    }
  });
});
