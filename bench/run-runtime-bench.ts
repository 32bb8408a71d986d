/**
 * Runtime part: agent runs end to end. For each provider (built-in `echo`, and a loopback fake
 * OpenAI server in its own process) and each `maxConcurrentRuns`, a fresh gateway gets N
 * `POST /hooks/agent` as fast as the loader sends them; then the part waits until no run is open
 * and reads the timings from the store (read-only). Last, the ingress with and without runs
 * executing (busy-ingress.ts).
 *
 * Env: BENCH_RUNTIME_RUNS (1000; 0 skips the scenarios), BENCH_RUNTIME_CONCURRENCY (4,16),
 * BENCH_RUNTIME_BUSY_ROUNDS (3; 0 skips the busy ingress), BENCH_RUNTIME_BUSY_DELAY_MS (50: the
 * fake's answer time there), BENCH_RUNTIME_BUSY_CONCURRENCY (4), BENCH_RUNTIME_BUSY_RUNS (runs
 * queued per busy window; default outlasts it by half), BENCH_RUNTIME_WAKE_SECONDS (10),
 * BENCH_RUNTIME_DRAIN_S (180: how long the runs may take), BENCH_CONNECTIONS (50),
 * BENCH_WARMUP_SECONDS (3), BENCH_CPU_PROF (a directory: profile every gateway).
 */
import { join } from 'node:path';
import { log } from './bench-env.js';
import { runBusyIngress } from './busy-ingress.js';
import { startGateway } from './gateway.js';
import type { BenchContext } from './ingress-bench.js';
import type { LoadResult } from './load-result.js';
import { sampleProcess, stopChild } from './proc.js';
import {
  ENQUEUE_MAX_S,
  agentConfig,
  enqueueRuns,
  gatewayFlags,
  isClean,
  startFake,
  stopFake,
  stopGateway,
  type RuntimeSettings,
} from './runtime-common.js';
import { RunsDb } from './runtime-db.js';
import {
  formatRuntimeSummary,
  scenarioLine,
  scenarioOf,
  type RuntimeSummary,
  type ScenarioResult,
} from './runtime-report.js';

export { runtimeSettings } from './runtime-common.js';

/** Upper bound of the runtime part's duration, s. */
export function runtimeBudgetS(s: RuntimeSettings): number {
  const perScenario = 15 + ENQUEUE_MAX_S + s.drainS + 40;
  const busy =
    s.busyRounds === 0 ? 0 : 60 + s.warmupSeconds + s.busyRounds * (2 * (s.wakeSeconds + 3) + ENQUEUE_MAX_S + s.drainS);
  return (s.runs === 0 ? 0 : 2 * s.concurrency.length * perScenario) + busy + 60;
}

async function runScenario(
  ctx: BenchContext,
  s: RuntimeSettings,
  provider: 'echo' | 'fake',
  maxConcurrentRuns: number,
): Promise<ScenarioResult> {
  const fake = provider === 'fake' ? await startFake(0) : null;
  try {
    const tag = `${provider}-c${maxConcurrentRuns}`;
    const gw = await startGateway({
      dir: join(ctx.root, `runtime-${tag}`),
      token: ctx.token,
      sync: ctx.sync,
      extra: agentConfig(fake, maxConcurrentRuns),
      nodeFlags: gatewayFlags(tag),
    });
    const db = new RunsDb(gw.dbPath);
    try {
      const sampler = sampleProcess(gw.child.pid);
      const t0 = performance.now();
      let enqueue: LoadResult;
      let sample: ReturnType<typeof sampler.stop>;
      try {
        enqueue = await enqueueRuns(gw.port, ctx.token, s.runs, s.connections);
        await db.waitAllFinished(enqueue.ok2xx, gw.child, s.drainS * 1000);
      } finally {
        sample = sampler.stop(); // its interval would keep the process alive
      }
      const wallS = (performance.now() - t0) / 1000;
      const stats = scenarioOf(db.stats());
      await stopGateway(gw);
      const providerCalls = fake === null ? null : await stopFake(fake);
      const result: ScenarioResult = {
        provider,
        maxConcurrentRuns,
        runs: s.runs,
        acceptedPerS: enqueue.rps,
        accepted: enqueue.ok2xx,
        enqueueNon2xx: enqueue.non2xx,
        enqueueErrors: enqueue.errors,
        completedPerS: stats.succeeded / Math.max(0.001, stats.spanMs / 1000),
        ...stats,
        maxRssMb: sample.maxRssKb / 1024,
        gatewayCpuPercent: sample.cpuPercent,
        gatewayCpuUsPerRun: ((sample.cpuPercent / 100) * wallS * 1e6) / Math.max(1, stats.succeeded),
        providerCalls,
        ok: isClean(enqueue) && enqueue.ok2xx === s.runs && stats.succeeded === s.runs && stats.failed === 0,
      };
      log(scenarioLine(result));
      if (enqueue.firstError !== null) log(`  first enqueue error: ${enqueue.firstError}`);
      return result;
    } finally {
      db.close();
      await stopChild(gw.child, 20_000);
    }
  } finally {
    if (fake !== null) await stopChild(fake.child);
  }
}

const round = (x: number, d: number): number => Number(x.toFixed(d));

function roundScenario(x: ScenarioResult): ScenarioResult {
  return {
    ...x,
    acceptedPerS: round(x.acceptedPerS, 0),
    completedPerS: round(x.completedPerS, 0),
    maxRssMb: round(x.maxRssMb, 1),
    gatewayCpuPercent: round(x.gatewayCpuPercent, 0),
    gatewayCpuUsPerRun: round(x.gatewayCpuUsPerRun, 0),
  };
}

/** Runs the runtime part; resolves with whether everything was correct. */
export async function runRuntimeBench(ctx: BenchContext, s: RuntimeSettings): Promise<boolean> {
  log(`runtime part: ${JSON.stringify({ ...s, sync: ctx.sync, loader: ctx.loader, entry: ctx.entry })}`);
  const scenarios: ScenarioResult[] = [];
  for (const provider of s.runs === 0 ? [] : (['echo', 'fake'] as const)) {
    for (const c of s.concurrency) scenarios.push(await runScenario(ctx, s, provider, c));
  }
  const busy = s.busyRounds === 0 ? null : await runBusyIngress(ctx, s);
  const summary: RuntimeSummary = {
    settings: { ...s, sync: ctx.sync, loader: ctx.loader, entry: ctx.entry },
    scenarios: scenarios.map(roundScenario),
    ingressUnderLoad: busy,
    ok: scenarios.every((x) => x.ok) && (busy === null || busy.ok),
  };
  log('');
  log(formatRuntimeSummary(summary));
  log(`BENCH_RUNTIME_JSON ${JSON.stringify(summary)}`);
  return summary.ok;
}
