/**
 * Ingress part: throughput, latency, memory and start-up time of the gateway's `POST /hooks/wake`
 * against a bare `node:http` baseline, both child processes on loopback, in alternating rounds.
 *
 * Env: BENCH_SECONDS (10), BENCH_ROUNDS (3), BENCH_CONNECTIONS (50), BENCH_WARMUP_SECONDS (3),
 * BENCH_START_RUNS (5), BENCH_WAKE_MODE (now; `next-heartbeat` leaves out the heartbeat turns a
 * `now` wake triggers), BENCH_CPU_PROF (a directory: run the measured gateway with `--cpu-prof`).
 */
import { resolve, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { envChoice, envNumber, log } from './bench-env.js';
import { startGateway, type StartedGateway } from './gateway.js';
import { runSampledLoad, type LoadResult, type Loader } from './load.js';
import { freePort, spawnNode, stopChild, waitHealthy, type Child } from './proc.js';
import { TARGETS, formatSummary, median, summarizeServer, type ServerRuns, type Summary } from './report.js';

export interface BenchContext {
  /** Which gateway entry point runs (gateway.ts). */
  entry: 'bundle' | 'src';
  root: string;
  token: string;
  /** Random hex, in every request body so bodies are distinct across runs. */
  runId: string;
  loader: Loader;
  sync: 'full' | 'normal';
}

const BARE_JS = fileURLToPath(new URL('./bare-server.js', import.meta.url));

export function ingressSettings() {
  return {
    seconds: envNumber('BENCH_SECONDS', 10, 1),
    rounds: Math.floor(envNumber('BENCH_ROUNDS', 3, 1)),
    connections: Math.floor(envNumber('BENCH_CONNECTIONS', 50, 1)),
    warmupSeconds: envNumber('BENCH_WARMUP_SECONDS', 3, 1),
    startRuns: Math.floor(envNumber('BENCH_START_RUNS', 5, 1)),
    mode: envChoice('BENCH_WAKE_MODE', ['now', 'next-heartbeat'] as const, 'now'),
  };
}
type IngressSettings = ReturnType<typeof ingressSettings>;

/** Upper bound of the ingress part's duration, s. */
export function ingressBudgetS(s: IngressSettings): number {
  return s.startRuns * 20 + 2 * (s.warmupSeconds + s.rounds * (s.seconds + 3)) + 120;
}

export async function startBare(token: string): Promise<{ child: Child; port: number }> {
  const port = await freePort();
  const child = spawnNode('bare', [BARE_JS], { ...process.env, BENCH_PORT: String(port), BENCH_TOKEN: token });
  await waitHealthy(child, port);
  return { child, port };
}

/** Spawn-to-first-200 of `/healthz`, each time with a fresh state dir (so it includes migration). */
async function measureStartup(ctx: BenchContext, runs: number): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const g = await startGateway({ dir: join(ctx.root, `start-${i}`), token: ctx.token, sync: ctx.sync });
    times.push(g.startMs);
    await stopChild(g.child);
    log(`startup ${i + 1}/${runs}: ${(g.startMs / 1000).toFixed(3)} s`);
  }
  return times;
}

function countRows(dbPath: string): { rows: number; distinctTexts: number } {
  const db = new Database(dbPath, { readonly: true, fileMustExist: true });
  try {
    const row = db.prepare('SELECT COUNT(*) AS rows, COUNT(DISTINCT text) AS texts FROM system_events').get() as {
      rows: number;
      texts: number;
    };
    return { rows: row.rows, distinctTexts: row.texts };
  } finally {
    db.close();
  }
}

const line = (name: string, r: LoadResult, cpu: number, rssKb: number): string =>
  `${name.padEnd(24)} ${r.rps.toFixed(0).padStart(6)} req/s  p50 ${r.p50.toFixed(2)} ms  p99 ${r.p99.toFixed(2)} ms  ` +
  `rss ${(rssKb / 1024).toFixed(1)} MB  cpu ${cpu.toFixed(0)}% (loader ${r.loaderCpuPercent.toFixed(0)}%)  ` +
  `non2xx ${r.non2xx} err ${r.errors}${r.firstError === null ? '' : ` (${r.firstError})`}`;

/** Runs the ingress part; resolves with whether it was correct (targets are reported only). */
export async function runIngressBench(ctx: BenchContext, settings: IngressSettings): Promise<boolean> {
  const cpuProfDir = process.env['BENCH_CPU_PROF'];
  const { mode } = settings;
  log(`ingress part: ${JSON.stringify({ ...settings, sync: ctx.sync, loader: ctx.loader, entry: ctx.entry })}`);

  const startupMs = await measureStartup(ctx, settings.startRuns);

  const bare = await startBare(ctx.token);
  const gw: StartedGateway = await startGateway({
    dir: join(ctx.root, 'main'),
    token: ctx.token,
    sync: ctx.sync,
    nodeFlags: cpuProfDir === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${resolve(cpuProfDir)}`],
  });
  const servers = [
    { key: 'bare', label: 'bare (a)', child: bare.child, port: bare.port },
    { key: 'hookgate', label: 'hookgate (b)', child: gw.child, port: gw.port },
  ] as const;
  const runs: Record<'bare' | 'hookgate', ServerRuns> = {
    bare: { warmup: null, rounds: [], cpuPercent: [], maxRssKb: 0 },
    hookgate: { warmup: null, rounds: [], cpuPercent: [], maxRssKb: 0 },
  };

  /** One load run with RSS/CPU sampling of the server child. */
  const loadServer = async (child: Child, port: number, seconds: number, label: string) => {
    const loaded = await runSampledLoad(child.pid, {
      loader: ctx.loader,
      port,
      token: ctx.token,
      connections: settings.connections,
      seconds,
      label,
      mode,
    });
    if (child.hasExited()) throw new Error(`${child.name} died under load:\n${child.output()}`);
    return loaded;
  };

  for (const s of servers) {
    const { result, sample } = await loadServer(s.child, s.port, settings.warmupSeconds, `${ctx.runId}-${s.key}-w`);
    runs[s.key].warmup = result;
    runs[s.key].maxRssKb = Math.max(runs[s.key].maxRssKb, sample.maxRssKb);
    log(line(`warm-up ${s.label}`, result, sample.cpuPercent, sample.maxRssKb));
  }
  // Alternate a, b each round so drift in the shared machine's load hits both alike.
  for (let r = 1; r <= settings.rounds; r++) {
    for (const s of servers) {
      const { result, sample } = await loadServer(s.child, s.port, settings.seconds, `${ctx.runId}-${s.key}-${r}`);
      const acc = runs[s.key];
      acc.rounds.push(result);
      acc.cpuPercent.push(sample.cpuPercent);
      acc.maxRssKb = Math.max(acc.maxRssKb, sample.maxRssKb);
      log(line(`round ${r} ${s.label}`, result, sample.cpuPercent, sample.maxRssKb));
    }
  }

  await stopChild(bare.child);
  const how = await stopChild(gw.child);
  if (how !== 'exit code 0') log(`hookgate did not stop cleanly (${how}):\n${gw.child.output()}`);
  const { rows, distinctTexts } = countRows(gw.dbPath);

  const a = summarizeServer(runs.bare);
  const b = summarizeServer(runs.hookgate);
  const ratio = Number((b.rps / a.rps).toFixed(3));
  const startup = {
    ms: startupMs.map((x) => Number(x.toFixed(1))),
    medianMs: Number(median(startupMs).toFixed(1)),
    maxMs: Number(Math.max(...startupMs).toFixed(1)),
  };
  // In-flight requests cut off when a run stops may be committed without being counted: rows >= 2xx.
  const durability = { rows, distinctTexts, ok2xx: b.ok2xx, ok: rows >= b.ok2xx && distinctTexts === rows };
  const summary: Summary = {
    settings: { ...settings, sync: ctx.sync, loader: ctx.loader, entry: ctx.entry },
    bare: a,
    hookgate: b,
    ratio,
    startup,
    durability,
    targets: {
      ratio: ratio >= TARGETS.ratio,
      p99: b.p99 <= TARGETS.p99Ms,
      rss: b.maxRssMb <= TARGETS.rssMb,
      startup: startup.medianMs <= TARGETS.startupS * 1000,
    },
    ok: durability.ok && a.non2xx + b.non2xx + a.errors + b.errors === 0,
  };
  log('');
  log(formatSummary(summary));
  if (!summary.ok) {
    log(`status codes: bare ${JSON.stringify(a.statusCodes)} hookgate ${JSON.stringify(b.statusCodes)}`);
    if (a.firstError !== null || b.firstError !== null)
      log(`first errors: bare ${a.firstError} / hookgate ${b.firstError}`);
  }
  // logLevel is warn, so anything here deserves a look.
  const gwOutput = gw.child.output().trim();
  if (gwOutput !== '') log(`hookgate wrote (last lines):\n${gwOutput.split('\n').slice(-5).join('\n')}`);
  log(`BENCH_JSON ${JSON.stringify(summary)}`);
  return summary.ok;
}
