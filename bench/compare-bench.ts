/**
 * The compare part: this build against an earlier commit's (built into a temp dir by
 * build-base.ts), side by side in one run, so a regression shows as a ratio. Three measures, each
 * alternating the builds under the same load:
 * - wakes: `POST /hooks/wake` at 50 connections on a bare `node:http` server, each build with the
 *   default config (no `logLevel`: its own default) and each at `warn`; every round loads every
 *   target in turn, the order rotated each round, each gateway's output going to a file;
 * - runs: agent runs through the echo model at each `maxConcurrentRuns`, a fresh gateway each trial;
 * - start: spawn to the first 200 of `/healthz` on a fresh state dir, and the idle RSS after it.
 *
 * Env: BENCH_COMPARE_BASE (d879cf2; also `--base`), BENCH_COMPARE_INSTALL (link: share this
 * checkout's node_modules | ci), BENCH_COMPARE_REBUILD (0), BENCH_COMPARE_MEASURES (wakes,runs,start),
 * BENCH_COMPARE_ROUNDS (5), BENCH_COMPARE_SECONDS (8), BENCH_WARMUP_SECONDS (3), BENCH_CONNECTIONS (50),
 * BENCH_COMPARE_WAKE_MODE (next-heartbeat), BENCH_COMPARE_RUNS (1000), BENCH_COMPARE_TRIALS (3),
 * BENCH_COMPARE_CONCURRENCY (4,16), BENCH_COMPARE_START_RUNS (7), BENCH_CPU_PROF (a directory:
 * profile this build's gateways).
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import Database from 'better-sqlite3';
import { envChoice, envIntList, envNumber, log } from './bench-env.js';
import { buildBase, describeHead, type BaseBuild } from './build-base.js';
import { formatCompare, type CompareSummary, type RunTrial, type WakeTarget } from './compare-report.js';
import { gatewayEntry, startGateway, type StartedGateway } from './gateway.js';
import { startBare, type BenchContext } from './ingress-bench.js';
import { runSampledLoad } from './load.js';
import { readRssKb, sampleProcess, stopChild, type Child } from './proc.js';
import { agentConfig, enqueueRuns } from './runtime-common.js';
import { RunsDb } from './runtime-db.js';

const MEASURES = ['wakes', 'runs', 'start'] as const;
type Measure = (typeof MEASURES)[number];

export function compareSettings(baseArg?: string) {
  const measures = (process.env['BENCH_COMPARE_MEASURES'] ?? MEASURES.join(','))
    .split(',')
    .map((m) => m.trim())
    .filter((m) => m !== '');
  for (const m of measures) {
    if (!(MEASURES as readonly string[]).includes(m))
      throw new Error(`BENCH_COMPARE_MEASURES: "${m}" is not one of ${MEASURES.join(', ')}`);
  }
  return {
    base: baseArg ?? process.env['BENCH_COMPARE_BASE'] ?? 'd879cf2',
    install: envChoice('BENCH_COMPARE_INSTALL', ['link', 'ci'] as const, 'link'),
    rebuild: process.env['BENCH_COMPARE_REBUILD'] === '1',
    measures: measures as Measure[],
    rounds: Math.floor(envNumber('BENCH_COMPARE_ROUNDS', 5, 1)),
    seconds: envNumber('BENCH_COMPARE_SECONDS', 8, 1),
    warmupSeconds: envNumber('BENCH_WARMUP_SECONDS', 3, 1),
    connections: Math.floor(envNumber('BENCH_CONNECTIONS', 50, 1)),
    mode: envChoice('BENCH_COMPARE_WAKE_MODE', ['next-heartbeat', 'now'] as const, 'next-heartbeat'),
    runs: Math.floor(envNumber('BENCH_COMPARE_RUNS', 1000, 1)),
    trials: Math.floor(envNumber('BENCH_COMPARE_TRIALS', 3, 1)),
    concurrency: envIntList('BENCH_COMPARE_CONCURRENCY', [4, 16], 1),
    startRuns: Math.floor(envNumber('BENCH_COMPARE_START_RUNS', 7, 1)),
  };
}
export type CompareSettings = ReturnType<typeof compareSettings>;

/** Upper bound of the compare part's duration, s (a first build included). */
export function compareBudgetS(s: CompareSettings): number {
  const wakes = 60 + 5 * (s.warmupSeconds + s.rounds * (s.seconds + 4));
  const runs = 2 * s.concurrency.length * s.trials * 200;
  const start = 2 * s.startRuns * 20;
  return 300 + wakes + runs + start;
}

interface Build {
  /** `now` (this checkout) or the base's short hash. */
  name: string;
  entry: string;
  bundleBytes: number | null;
  /** Profiles are taken of this build's gateways only (BENCH_CPU_PROF). */
  profile: boolean;
}

const profileFlags = (b: Build, tag: string): string[] => {
  const dir = process.env['BENCH_CPU_PROF'];
  return dir === undefined || !b.profile
    ? []
    : ['--cpu-prof', `--cpu-prof-dir=${resolve(dir)}`, `--cpu-prof-name=compare-${tag}-${Date.now()}.cpuprofile`];
};

/** Events stored by a gateway, counted once it has stopped. */
function countEvents(dbPath: string): number {
  const db = new Database(dbPath, { readonly: true, fileMustExist: true });
  try {
    return (db.prepare('SELECT COUNT(*) AS n FROM system_events').get() as { n: number }).n;
  } finally {
    db.close();
  }
}

/** Access lines in a gateway's output file (this build's message; an older build may write none). */
function countAccessLines(logFile: string): number {
  const text = readFileSync(logFile, 'utf8');
  let n = 0;
  for (let at = text.indexOf('"hook request"'); at !== -1; at = text.indexOf('"hook request"', at + 1)) n++;
  return n;
}

interface Running {
  target: WakeTarget;
  child: Child;
  port: number;
  gateway: StartedGateway | null;
  logFile: string | null;
}

async function measureWakes(ctx: BenchContext, s: CompareSettings, builds: Build[]): Promise<WakeTarget[]> {
  const running: Running[] = [];
  const bare = await startBare(ctx.token);
  const newTarget = (key: string, label: string): WakeTarget => ({
    key,
    label,
    rps: [],
    p99: [],
    cpuUsPerRequest: [],
    maxRssMb: 0,
    ok2xx: 0,
    bad: 0,
    stored: null,
    accessLines: null,
  });
  running.push({
    target: newTarget('bare', 'bare node:http'),
    child: bare.child,
    port: bare.port,
    gateway: null,
    logFile: null,
  });
  try {
    for (const b of builds) {
      for (const level of [null, 'warn'] as const) {
        const tag = `${b.name}-${level ?? 'default'}`;
        const dir = join(ctx.root, `compare-${tag}`);
        const logFile = join(ctx.root, `compare-${tag}.log`);
        const gw = await startGateway({
          dir,
          token: ctx.token,
          sync: ctx.sync,
          entry: b.entry,
          logLevel: level,
          logFile,
          nodeFlags: profileFlags(b, `wakes-${tag}`),
        });
        const label = `${b.name} ${level === null ? 'default config' : 'logLevel warn'}`;
        running.push({ target: newTarget(tag, label), child: gw.child, port: gw.port, gateway: gw, logFile });
      }
    }
    const load = async (r: Running, seconds: number, round: string) => {
      const { result, sample } = await runSampledLoad(r.child.pid, {
        loader: ctx.loader,
        port: r.port,
        token: ctx.token,
        connections: s.connections,
        seconds,
        label: `${ctx.runId}-${r.target.key}-${round}`,
        mode: s.mode,
      });
      if (r.child.hasExited()) throw new Error(`${r.target.label} died under load:\n${r.child.output()}`);
      r.target.maxRssMb = Math.max(r.target.maxRssMb, sample.maxRssKb / 1024);
      r.target.ok2xx += result.ok2xx;
      r.target.bad += result.non2xx + result.errors;
      return { result, sample };
    };
    for (const r of running) await load(r, s.warmupSeconds, 'w');
    log(`  warm-up done (${s.warmupSeconds} s each)`);
    for (let round = 1; round <= s.rounds; round++) {
      const cells: string[] = [];
      // Rotated each round: no target always follows the same one.
      for (let i = 0; i < running.length; i++) {
        const r = running[(i + round - 1) % running.length]!;
        const { result, sample } = await load(r, s.seconds, String(round));
        r.target.rps.push(result.rps);
        r.target.p99.push(result.p99);
        r.target.cpuUsPerRequest.push(((sample.cpuPercent / 100) * 1e6) / Math.max(1, result.rps));
        cells.push(`${r.target.key} ${Math.round(result.rps)}`);
        await sleep(500); // let the last one's background work (checkpoints, request log) settle
      }
      log(`  round ${round}/${s.rounds}: ${cells.join(', ')} req/s`);
    }
  } finally {
    for (const r of running) {
      const how = await stopChild(r.child, 20_000);
      if (r.gateway !== null && how !== 'exit code 0') log(`  ${r.target.label} did not stop cleanly (${how})`);
    }
  }
  for (const r of running) {
    if (r.gateway === null) continue;
    r.target.stored = countEvents(r.gateway.dbPath);
    if (r.logFile !== null) r.target.accessLines = countAccessLines(r.logFile);
  }
  return running.map((r) => r.target);
}

async function measureRuns(ctx: BenchContext, s: CompareSettings, builds: Build[]): Promise<RunTrial[]> {
  const trials: RunTrial[] = [];
  for (const c of s.concurrency) {
    for (let t = 1; t <= s.trials; t++) {
      const order = t % 2 === 1 ? builds : [...builds].reverse();
      for (const b of order) {
        const tag = `${b.name}-c${c}-${t}`;
        const gw = await startGateway({
          dir: join(ctx.root, `compare-runs-${tag}`),
          token: ctx.token,
          sync: ctx.sync,
          entry: b.entry,
          logLevel: null,
          logFile: join(ctx.root, `compare-runs-${tag}.log`),
          extra: agentConfig(null, c),
          nodeFlags: profileFlags(b, `runs-${tag}`),
        });
        const db = new RunsDb(gw.dbPath);
        const sampler = sampleProcess(gw.child.pid);
        try {
          const enqueue = await enqueueRuns(gw.port, ctx.token, s.runs, s.connections);
          await db.waitAllFinished(enqueue.ok2xx, gw.child, 180_000);
          const stats = db.stats();
          const succeeded = stats.byState['succeeded'] ?? 0;
          const trial: RunTrial = {
            build: b.name,
            concurrency: c,
            runsPerS: succeeded / Math.max(0.001, stats.spanMs / 1000),
            succeeded,
            runs: s.runs,
            maxRssMb: sampler.stop().maxRssKb / 1024,
            clean: enqueue.non2xx + enqueue.errors === 0 && enqueue.ok2xx === s.runs && succeeded === s.runs,
          };
          trials.push(trial);
          log(
            `  runs c=${c} trial ${t} ${b.name}: ${Math.round(trial.runsPerS)} runs/s (${succeeded}/${s.runs} succeeded)`,
          );
        } finally {
          sampler.stop();
          db.close();
          await stopChild(gw.child, 20_000);
        }
      }
    }
  }
  return trials;
}

async function measureStart(
  ctx: BenchContext,
  s: CompareSettings,
  builds: Build[],
): Promise<Record<string, { startMs: number[]; idleRssMb: number[] }>> {
  const out: Record<string, { startMs: number[]; idleRssMb: number[] }> = {};
  for (const b of builds) out[b.name] = { startMs: [], idleRssMb: [] };
  for (let i = 0; i < s.startRuns; i++) {
    for (const b of i % 2 === 0 ? builds : [...builds].reverse()) {
      const tag = `${b.name}-${i}`;
      const gw = await startGateway({
        dir: join(ctx.root, `compare-start-${tag}`),
        token: ctx.token,
        sync: ctx.sync,
        entry: b.entry,
        logLevel: null,
        logFile: join(ctx.root, `compare-start-${tag}.log`),
      });
      // Idle: whatever starts a moment after listening (the checkpoint thread at 1 s) has started.
      await sleep(1_500);
      const rss = readRssKb(gw.child.pid) ?? 0;
      await stopChild(gw.child);
      out[b.name]!.startMs.push(gw.startMs);
      out[b.name]!.idleRssMb.push(rss / 1024);
    }
  }
  log(
    `  start to healthy: ${builds.map((b) => `${b.name} ${out[b.name]!.startMs.map((x) => Math.round(x)).join('/')} ms`).join('; ')}`,
  );
  return out;
}

/** Runs the compare part; resolves with whether it was correct (goals are reported only). */
export async function runCompareBench(ctx: BenchContext, s: CompareSettings): Promise<boolean> {
  const base: BaseBuild = buildBase(s.base, { install: s.install, rebuild: s.rebuild });
  const head = describeHead();
  const current = gatewayEntry();
  const builds: Build[] = [
    { name: 'now', entry: current.path, bundleBytes: bundleSize(current.path), profile: true },
    { name: base.short, entry: base.entry, bundleBytes: base.bundleBytes, profile: false },
  ];
  log(
    `compare part: now = ${head} (${current.path}) against ${base.short} (${base.entry}); ` +
      `${JSON.stringify({ ...s, sync: ctx.sync, loader: ctx.loader })}`,
  );
  const summary: CompareSummary = {
    head,
    base: base.short,
    settings: { ...s, sync: ctx.sync, loader: ctx.loader },
    bundleBytes: Object.fromEntries(builds.map((b) => [b.name, b.bundleBytes])),
    wakes: s.measures.includes('wakes') ? await measureWakes(ctx, s, builds) : null,
    runs: s.measures.includes('runs') ? await measureRuns(ctx, s, builds) : null,
    start: s.measures.includes('start') ? await measureStart(ctx, s, builds) : null,
    ok: true,
  };
  summary.ok =
    (summary.wakes ?? []).every((t) => t.bad === 0 && (t.stored === null || t.stored >= t.ok2xx)) &&
    (summary.runs ?? []).every((t) => t.clean);
  log('');
  log(formatCompare(summary));
  log(`BENCH_COMPARE_JSON ${JSON.stringify(summary)}`);
  return summary.ok;
}

function bundleSize(entry: string): number | null {
  try {
    return entry.endsWith(join('bundle', 'main.js')) ? readFileSync(entry).length : null;
  } catch {
    return null;
  }
}
