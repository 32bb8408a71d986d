/**
 * Crash under load (DESIGN §1.1, §8): concurrent wakes and agent runs against a gateway child
 * process, `kill -9` at a random moment, then every acknowledged request must be in the SQLite
 * store exactly once (and every run executed at most once). Repeated over a few restarts of the
 * same config.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Agent } from 'node:http';
import { readConfig } from '../../src/config/index.js';
import { openStore } from '../../src/main.js';
import { freePort, spawnGateway, type GatewayProcess } from '../helpers/gateway-process.js';
import { post } from '../helpers/http-client.js';
import { baseConfig, createTempConfig } from '../helpers/temp-config.js';

const CLIENTS = 40;
const RUN_STATES: readonly string[] = ['queued', 'running', 'succeeded', 'failed', 'timed_out'];
const ITERATIONS = 3;
/** The kill comes after this many acknowledgements (plus a random few hundred) … */
const MIN_ACKS_BEFORE_KILL = 200;
/** … or after this long under load, whichever is first. */
const MAX_LOAD_MS = 5_000;

interface Acked {
  /** eventId → text of every wake that got 200. */
  events: Map<string, string>;
  /** runId → message of every agent run that got 202. */
  runs: Map<string, string>;
}

interface LoadReport {
  acks: number;
  /** Anything before the kill that was not a 200/202: must stay empty. */
  unexpected: string[];
}

/**
 * Fires wakes and agent runs from `CLIENTS` keep-alive clients, each request with a distinct text,
 * and signals the gateway (SIGKILL by default) at a random moment after a few hundred
 * acknowledgements. Resolves once the process is gone.
 */
async function loadAndKill(
  gw: GatewayProcess,
  round: number,
  acked: Acked,
  stopWith: 'SIGKILL' | 'SIGTERM' = 'SIGKILL',
): Promise<LoadReport> {
  const agent = new Agent({ keepAlive: true, maxSockets: CLIENTS });
  const threshold = MIN_ACKS_BEFORE_KILL + Math.floor(Math.random() * 400);
  const report: LoadReport = { acks: 0, unexpected: [] };
  let killed = false;
  let killScheduled = false;
  const kill = (): void => {
    if (killed) return;
    killed = true;
    if (stopWith === 'SIGKILL') void gw.kill();
    else gw.child.kill('SIGTERM');
  };
  const deadline = setTimeout(kill, MAX_LOAD_MS);
  const scheduleKill = (): void => {
    if (killScheduled) return;
    killScheduled = true;
    // A random moment shortly after the threshold, while requests are in flight.
    setTimeout(kill, Math.floor(Math.random() * 50));
  };

  const client = async (c: number): Promise<void> => {
    for (let n = 0; !killed; n++) {
      const kind = (c + n) % 2 === 0 ? 'wake' : 'agent';
      const text = `r${round}-c${c}-n${n}-${kind}`;
      try {
        const res = await post(gw.port, `/hooks/${kind}`, kind === 'wake' ? { text } : { message: text }, {
          agent,
          timeoutMs: 20_000,
        });
        if (kind === 'wake' && res.status === 200) {
          acked.events.set((res.json as { eventId: string }).eventId, text);
        } else if (kind === 'agent' && res.status === 202) {
          acked.runs.set((res.json as { runId: string }).runId, text);
        } else {
          if (!killed) report.unexpected.push(`${kind} ${text}: ${res.status} ${res.text}`);
          continue;
        }
        report.acks++;
        if (report.acks >= threshold) scheduleKill();
      } catch (error) {
        // After the signal, resets and refused connections are expected; before it, they are not.
        if (!killed) report.unexpected.push(`${kind} ${text}: ${(error as Error).message}`);
        return;
      }
    }
  };

  try {
    await Promise.all(Array.from({ length: CLIENTS }, (_, c) => client(c)));
    kill();
    await gw.exited;
  } finally {
    clearTimeout(deadline);
    agent.destroy();
  }
  return report;
}

/** Opens the store read-only and checks every acknowledged record is there exactly once. */
async function assertAllPresent(configPath: string, acked: Acked): Promise<{ events: number; runs: number }> {
  const store = await openStore(readConfig(configPath, {}), { mode: 'read' });
  try {
    const events = await store.listSystemEvents({ limit: 10_000_000 });
    const runs = await store.listRuns({ limit: 10_000_000 });
    const eventById = new Map(events.map((e) => [e.id, e]));
    const runById = new Map(runs.map((r) => [r.id, r]));
    assert.equal(eventById.size, events.length, 'event ids are unique');
    assert.equal(runById.size, runs.length, 'run ids are unique');
    const textCount = new Map<string, number>();
    for (const e of events) textCount.set(e.text, (textCount.get(e.text) ?? 0) + 1);
    const messageCount = new Map<string, number>();
    for (const r of runs) messageCount.set(r.message, (messageCount.get(r.message) ?? 0) + 1);

    const missingEvents = [...acked.events].filter(([id, text]) => eventById.get(id)?.text !== text);
    assert.deepEqual(missingEvents.slice(0, 10), [], `${missingEvents.length} acknowledged events missing or altered`);
    const duplicateEvents = [...acked.events.values()].filter((text) => textCount.get(text) !== 1);
    assert.deepEqual(duplicateEvents.slice(0, 10), [], 'each acknowledged wake is stored exactly once');

    const missingRuns = [...acked.runs].filter(([id, message]) => runById.get(id)?.message !== message);
    assert.deepEqual(missingRuns.slice(0, 10), [], `${missingRuns.length} acknowledged runs missing or altered`);
    const duplicateRuns = [...acked.runs.values()].filter((m) => messageCount.get(m) !== 1);
    assert.deepEqual(duplicateRuns.slice(0, 10), [], 'each acknowledged run is stored exactly once');

    // The runtime may have executed runs between the 202 and the kill, or after a restart. A run
    // finishes at most once: a succeeded run wrote its prompt and reply once, any other none.
    const badRuns: string[] = [];
    for (const id of acked.runs.keys()) {
      const run = runById.get(id)!;
      if (!RUN_STATES.includes(run.state)) badRuns.push(`${id}: unknown state ${run.state}`);
      const turns = (await store.readTranscript(run.sessionKey, { limit: 100 })).filter((e) => e.turnId === id).length;
      const expected = run.state === 'succeeded' ? 2 : 0;
      if (turns !== expected) badRuns.push(`${id}: ${run.state} with ${turns} transcript entries`);
    }
    assert.deepEqual(badRuns.slice(0, 10), [], `${badRuns.length} runs executed other than exactly once`);
    return { events: events.length, runs: runs.length };
  } finally {
    await store.close();
  }
}

describe('crash under load', () => {
  const cleanups: Array<() => void> = [];
  after(() => {
    for (const c of cleanups) c();
  });

  it('keeps every acknowledged wake and agent run across repeated kill -9 and restarts', {
    timeout: 180_000,
  }, async (t) => {
    const port = await freePort();
    const temp = createTempConfig(baseConfig({ gateway: { port, logLevel: 'error' } }));
    cleanups.push(temp.cleanup);
    const acked: Acked = { events: new Map(), runs: new Map() };

    for (let round = 0; round < ITERATIONS; round++) {
      const gw = await spawnGateway(['--config', temp.path], port);
      try {
        // The restarted server serves, and still has everything acknowledged before the crash.
        const probe = await post(port, '/hooks/wake', { text: `r${round}-probe` });
        assert.equal(probe.status, 200, probe.text);
        acked.events.set((probe.json as { eventId: string }).eventId, `r${round}-probe`);

        const report = await loadAndKill(gw, round, acked);
        t.diagnostic(
          `round ${round}: ${report.acks} acknowledged before kill -9 (${gw.output().stderr.length} bytes of stderr)`,
        );
        assert.deepEqual(
          report.unexpected.slice(0, 10),
          [],
          `${report.unexpected.length} unexpected answers before the kill`,
        );
        assert.ok(report.acks > 0, 'the gateway acknowledged requests before the kill');
      } finally {
        await gw.kill();
      }
      const totals = await assertAllPresent(temp.path, acked);
      t.diagnostic(
        `round ${round}: store holds ${totals.events} events, ${totals.runs} runs; ${acked.events.size + acked.runs.size} acknowledged so far`,
      );
    }

    // A last restart: it serves, then shuts down gracefully, and nothing acknowledged is lost.
    const gw = await spawnGateway(['--config', temp.path], port);
    try {
      const wake = await post(port, '/hooks/wake', { text: 'after the crashes' });
      assert.equal(wake.status, 200, wake.text);
      acked.events.set((wake.json as { eventId: string }).eventId, 'after the crashes');
      const run = await post(port, '/hooks/agent', { message: 'after the crashes (run)' });
      assert.equal(run.status, 202, run.text);
      acked.runs.set((run.json as { runId: string }).runId, 'after the crashes (run)');
    } finally {
      const code = await gw.stop();
      assert.equal(code, 0, `graceful stop exits 0: ${gw.output().stderr}`);
    }
    await assertAllPresent(temp.path, acked);
  });

  it('stops gracefully on SIGTERM under load, exits 0 and keeps every acknowledged request', {
    timeout: 120_000,
  }, async (t) => {
    const port = await freePort();
    const temp = createTempConfig(baseConfig({ gateway: { port, logLevel: 'error' } }));
    cleanups.push(temp.cleanup);
    const acked: Acked = { events: new Map(), runs: new Map() };
    const gw = await spawnGateway(['--config', temp.path], port);
    let report: LoadReport;
    const exitTimer = setTimeout(() => gw.child.kill('SIGKILL'), 30_000);
    try {
      report = await loadAndKill(gw, 0, acked, 'SIGTERM');
    } finally {
      clearTimeout(exitTimer);
      await gw.kill();
    }
    const { code, signal } = await gw.exited;
    t.diagnostic(`${report.acks} acknowledged before SIGTERM; exit code ${code}, signal ${signal}`);
    assert.equal(signal, null, 'exited by itself, not killed after the 30 s grace period');
    assert.equal(code, 0, gw.output().stderr);
    assert.deepEqual(report.unexpected.slice(0, 10), []);
    await assertAllPresent(temp.path, acked);
  });
});
