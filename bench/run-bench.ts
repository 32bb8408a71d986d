/**
 * `npm run bench`: throughput, latency, memory and start-up time of the Hookgate gateway against a
 * bare `node:http` baseline, both as child processes on loopback, loaded by autocannon from here.
 *
 * Env: BENCH_SECONDS (10), BENCH_ROUNDS (3), BENCH_CONNECTIONS (50), BENCH_WARMUP_SECONDS (3),
 * BENCH_START_RUNS (5), BENCH_TMPDIR (os.tmpdir(); the gateway's SQLite file lives there, so put it
 * on the disk you care about), BENCH_SYNC (full; `normal` to see what the per-commit fsync costs),
 * BENCH_WAKE_MODE (now; `next-heartbeat` to leave out the heartbeat turns a `now` wake triggers),
 * BENCH_CPU_PROF (a directory: run the measured gateway with `--cpu-prof` and write the profile there).
 * Exit code 1 on any non-2xx, socket error, missing durable row or failed start; targets are
 * reported only.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { constants, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { runLoad, type LoadResult } from './load.js';
import { freePort, killAllSync, sampleProcess, spawnNode, stopChild, waitHealthy, type Child } from './proc.js';
import { TARGETS, formatSummary, median, summarizeServer, type ServerRuns, type Summary } from './report.js';

function envNumber(name: string, fallback: number, min: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < min) throw new Error(`${name} must be a number >= ${min}, got "${raw}"`);
  return value;
}

const settings = {
  seconds: envNumber('BENCH_SECONDS', 10, 1),
  rounds: Math.floor(envNumber('BENCH_ROUNDS', 3, 1)),
  connections: Math.floor(envNumber('BENCH_CONNECTIONS', 50, 1)),
  warmupSeconds: envNumber('BENCH_WARMUP_SECONDS', 3, 1),
  startRuns: Math.floor(envNumber('BENCH_START_RUNS', 5, 1)),
};
const cpuProfDir = process.env['BENCH_CPU_PROF'];
const sync = ((raw: string): 'full' | 'normal' => {
  if (raw !== 'full' && raw !== 'normal') throw new Error(`BENCH_SYNC must be "full" or "normal", got "${raw}"`);
  return raw;
})(process.env['BENCH_SYNC'] ?? 'full');
const mode = ((raw: string): 'now' | 'next-heartbeat' => {
  if (raw !== 'now' && raw !== 'next-heartbeat') throw new Error(`BENCH_WAKE_MODE must be "now" or "next-heartbeat", got "${raw}"`);
  return raw;
})(process.env['BENCH_WAKE_MODE'] ?? 'now');

const MAIN_JS = fileURLToPath(new URL('../src/main.js', import.meta.url));
const BARE_JS = fileURLToPath(new URL('./bare-server.js', import.meta.url));

// Everything the run writes lives under one temp dir, removed on every way out.
const root = mkdtempSync(join(process.env['BENCH_TMPDIR'] ?? tmpdir(), 'hookgate-bench-'));
let cleaned = false;
function cleanupSync(): void {
  if (cleaned) return;
  cleaned = true;
  killAllSync();
  rmSync(root, { recursive: true, force: true });
}
process.on('exit', cleanupSync);
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    process.stderr.write(`\nbench: ${signal}, stopping children and removing ${root}\n`);
    cleanupSync();
    process.exit(128 + constants.signals[signal]);
  });
}
// Watchdog: no run may outlive its own budget (a hung child or autocannon would otherwise hang CI).
const budgetS = settings.startRuns * 20 + 2 * (settings.warmupSeconds + settings.rounds * settings.seconds) + 120;
setTimeout(() => {
  process.stderr.write(`bench: exceeded the ${budgetS} s budget, aborting\n`);
  process.exit(1);
}, budgetS * 1000).unref();

const log = (line: string): void => void process.stdout.write(`${line}\n`);

/** Writes a gateway config into `dir` (state under `dir/state`) and returns its path. */
function writeGatewayConfig(dir: string, port: number, token: string): string {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const config = {
    gateway: { bind: '127.0.0.1', port, logLevel: 'warn' },
    hooks: { enabled: true, token, path: '/hooks' },
    store: { driver: 'sqlite', path: join(dir, 'state', 'hookgate.db'), sync },
  };
  const path = join(dir, 'hookgate.json');
  writeFileSync(path, JSON.stringify(config, null, 2), { mode: 0o600 });
  return path;
}

async function startGateway(dir: string, token: string, nodeFlags: readonly string[] = []) {
  const port = await freePort();
  const config = writeGatewayConfig(dir, port, token);
  const t0 = performance.now();
  const child = spawnNode('hookgate', [...nodeFlags, MAIN_JS, 'serve', '--config', config], process.env);
  await waitHealthy(child, port);
  return { child, port, startMs: performance.now() - t0, dbPath: join(dir, 'state', 'hookgate.db') };
}

async function startBare(token: string): Promise<{ child: Child; port: number }> {
  const port = await freePort();
  const child = spawnNode('bare', [BARE_JS], { ...process.env, BENCH_PORT: String(port), BENCH_TOKEN: token });
  await waitHealthy(child, port);
  return { child, port };
}

/** Spawn-to-first-200 of `/healthz`, each time with a fresh state dir (so it includes migration). */
async function measureStartup(token: string): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < settings.startRuns; i++) {
    const g = await startGateway(join(root, `start-${i}`), token);
    times.push(g.startMs);
    await stopChild(g.child);
    log(`startup ${i + 1}/${settings.startRuns}: ${(g.startMs / 1000).toFixed(3)} s`);
  }
  return times;
}

/** One load run with RSS/CPU sampling of the server child. */
async function loadServer(child: Child, port: number, token: string, seconds: number, label: string) {
  const sampler = sampleProcess(child.pid);
  try {
    const result = await runLoad({ port, token, connections: settings.connections, seconds, label, mode });
    const sample = sampler.stop();
    if (child.hasExited()) throw new Error(`${child.name} died under load:\n${child.output()}`);
    return { result, sample };
  } catch (error) {
    sampler.stop(); // its interval would keep the process alive
    throw error;
  }
}

function countRows(dbPath: string): { rows: number; distinctTexts: number } {
  const db = new Database(dbPath, { readonly: true, fileMustExist: true });
  try {
    const row = db.prepare('SELECT COUNT(*) AS rows, COUNT(DISTINCT text) AS texts FROM system_events').get() as
      { rows: number; texts: number };
    return { rows: row.rows, distinctTexts: row.texts };
  } finally {
    db.close();
  }
}

async function main(): Promise<number> {
  const token = randomBytes(24).toString('base64url');
  const runId = randomBytes(4).toString('hex');
  log(`hookgate bench: ${JSON.stringify({ ...settings, sync, mode })}, state under ${root}`);

  const startupMs = await measureStartup(token);

  const bare = await startBare(token);
  const gw = await startGateway(join(root, 'main'), token,
    cpuProfDir === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${resolve(cpuProfDir)}`]);
  const servers = [
    { key: 'bare', label: 'bare (a)', child: bare.child, port: bare.port },
    { key: 'hookgate', label: 'hookgate (b)', child: gw.child, port: gw.port },
  ] as const;

  const runs: Record<'bare' | 'hookgate', ServerRuns> = {
    bare: { warmup: null, rounds: [], cpuPercent: [], maxRssKb: 0 },
    hookgate: { warmup: null, rounds: [], cpuPercent: [], maxRssKb: 0 },
  };
  const line = (name: string, r: LoadResult, cpu: number, rssKb: number): string =>
    `${name.padEnd(24)} ${r.rps.toFixed(0).padStart(6)} req/s  p50 ${r.p50.toFixed(2)} ms  p99 ${r.p99.toFixed(2)} ms  ` +
    `rss ${(rssKb / 1024).toFixed(1)} MB  cpu ${cpu.toFixed(0)}% (loader ${r.loaderCpuPercent.toFixed(0)}%)  ` +
    `non2xx ${r.non2xx} err ${r.errors}${r.firstError === null ? '' : ` (${r.firstError})`}`;

  for (const s of servers) {
    const { result, sample } = await loadServer(s.child, s.port, token, settings.warmupSeconds, `${runId}-${s.key}-w`);
    runs[s.key].warmup = result;
    runs[s.key].maxRssKb = Math.max(runs[s.key].maxRssKb, sample.maxRssKb);
    log(line(`warm-up ${s.label}`, result, sample.cpuPercent, sample.maxRssKb));
  }
  // Alternate a, b each round so drift in the shared machine's load hits both alike.
  for (let r = 1; r <= settings.rounds; r++) {
    for (const s of servers) {
      const { result, sample } = await loadServer(s.child, s.port, token, settings.seconds, `${runId}-${s.key}-${r}`);
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
  // In-flight requests cut off by autocannon's stop may be committed without being counted: rows >= 2xx.
  const durability = { rows, distinctTexts, ok2xx: b.ok2xx, ok: rows >= b.ok2xx && distinctTexts === rows };
  const summary: Summary = {
    settings: { ...settings, sync, mode },
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
    if (a.firstError !== null || b.firstError !== null) log(`first errors: bare ${a.firstError} / hookgate ${b.firstError}`);
  }
  // logLevel is warn, so anything here deserves a look.
  const gwOutput = gw.child.output().trim();
  if (gwOutput !== '') log(`hookgate wrote (last lines):\n${gwOutput.split('\n').slice(-5).join('\n')}`);
  log(`BENCH_JSON ${JSON.stringify(summary)}`);
  return summary.ok ? 0 : 1;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`bench: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exitCode = 1;
  },
);
