/**
 * The runtime must not slow the ingress: `POST /hooks/wake` (next-heartbeat) throughput with no run
 * executing, then while a queue of runs against a slow fake keeps the worker pool busy, in
 * alternating rounds (idle, queue runs, busy, let the queue drain) so drift hits both alike.
 */
import { join } from 'node:path';
import { log } from './bench-env.js';
import { startGateway, type StartedGateway } from './gateway.js';
import type { BenchContext } from './ingress-bench.js';
import { runSampledLoad } from './load.js';
import { stopChild } from './proc.js';
import {
  agentConfig,
  enqueueRuns,
  gatewayFlags,
  isClean,
  startFake,
  stopGateway,
  type RuntimeSettings,
} from './runtime-common.js';
import { RunsDb } from './runtime-db.js';
import { wakeWindow, type BusyIngressResult, type BusyRound, type WakeWindow } from './runtime-report.js';

/** One wake load of `seconds`, with the gateway's CPU and the runs that finished meanwhile. */
async function wakeLoad(
  ctx: BenchContext,
  gw: StartedGateway,
  db: RunsDb,
  s: RuntimeSettings,
  seconds: number,
  label: string,
) {
  const before = db.countFinished();
  const { result: load, sample } = await runSampledLoad(gw.child.pid, {
    loader: ctx.loader,
    port: gw.port,
    token: ctx.token,
    connections: s.connections,
    seconds,
    label,
    mode: 'next-heartbeat',
  });
  if (gw.child.hasExited()) throw new Error(`hookgate died under load:\n${gw.child.output()}`);
  return { load, window: wakeWindow(load, sample.cpuPercent, db.countFinished() - before) };
}

const describe = (w: WakeWindow): string =>
  `${w.rps} req/s p50 ${w.p50.toFixed(2)} p99 ${w.p99.toFixed(2)} ms, gw cpu ${w.gatewayCpuPercent}%`;

export async function runBusyIngress(ctx: BenchContext, s: RuntimeSettings): Promise<BusyIngressResult> {
  const fake = await startFake(s.busyDelayMs);
  try {
    const gw = await startGateway({
      dir: join(ctx.root, 'runtime-busy'),
      token: ctx.token,
      sync: ctx.sync,
      extra: agentConfig(fake, s.busyConcurrency),
      nodeFlags: gatewayFlags('busy'),
    });
    const db = new RunsDb(gw.dbPath);
    try {
      const warm = await wakeLoad(ctx, gw, db, s, s.warmupSeconds, `${ctx.runId}-rt-w`);
      log(`wake warm-up: ${describe(warm.window)}`);
      const rounds: BusyRound[] = [];
      let clean = isClean(warm.load);
      let queuedAll = 0;
      for (let r = 1; r <= s.busyRounds; r++) {
        const idle = await wakeLoad(ctx, gw, db, s, s.wakeSeconds, `${ctx.runId}-rt-idle-${r}`);
        log(`round ${r} wake, no runs:   ${describe(idle.window)}`);
        const queued = await enqueueRuns(gw.port, ctx.token, s.busyRuns, s.connections);
        queuedAll += queued.ok2xx;
        const busy = await wakeLoad(ctx, gw, db, s, s.wakeSeconds, `${ctx.runId}-rt-busy-${r}`);
        const openAfter = db.openRuns();
        log(
          `round ${r} wake, runs busy: ${describe(busy.window)}; ${queued.ok2xx} runs queued at ${queued.rps.toFixed(0)}/s, ` +
            `${busy.window.runsFinished} finished in the window, ${openAfter} still open`,
        );
        rounds.push({
          idle: idle.window,
          busy: busy.window,
          queued: queued.ok2xx,
          queuedPerS: Math.round(queued.rps),
          openAfter,
        });
        clean &&= isClean(idle.load) && isClean(busy.load) && isClean(queued) && queued.ok2xx === s.busyRuns;
        // The next idle window starts with an empty queue.
        await db.waitAllFinished(queuedAll, gw.child, s.drainS * 1000);
      }
      const failed = db.countNotSucceeded();
      await stopGateway(gw);
      const mean = (f: (r: BusyRound) => number): number =>
        rounds.reduce((a, r) => a + f(r), 0) / Math.max(1, rounds.length);
      const idleRps = mean((r) => r.idle.rps);
      const busyRps = mean((r) => r.busy.rps);
      return {
        delayMs: s.busyDelayMs,
        maxConcurrentRuns: s.busyConcurrency,
        runsPerRound: s.busyRuns,
        rounds,
        idle: {
          rps: Math.round(idleRps),
          p99: Number(mean((r) => r.idle.p99).toFixed(3)),
          gatewayCpuPercent: Math.round(mean((r) => r.idle.gatewayCpuPercent)),
        },
        busy: {
          rps: Math.round(busyRps),
          p99: Number(mean((r) => r.busy.p99).toFixed(3)),
          gatewayCpuPercent: Math.round(mean((r) => r.busy.gatewayCpuPercent)),
        },
        ratio: Number((busyRps / idleRps).toFixed(3)),
        failedRuns: failed,
        // The pool must have been busy through every busy window: runs finished in it and some were left.
        ok: clean && failed === 0 && rounds.every((r) => r.busy.runsFinished > 0 && r.openAfter > 0),
      };
    } finally {
      db.close();
      await stopChild(gw.child, 20_000);
    }
  } finally {
    await stopChild(fake.child);
  }
}
