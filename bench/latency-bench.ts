/**
 * Latency part: the gateway's `POST /hooks/wake` latency at a steady open-loop rate, on a
 * database that already holds a month of wakes, with a ledger that every request sent was
 * acknowledged and every acknowledged wake is stored.
 *
 * The gateway starts once to create its schema and stops; the rows are bulk-inserted
 * (seed-database.ts); the gateway starts again on that file, gets a short warm-up at the same
 * rate, then the timed run (open-loop-load.ts: latency from each request's due time).
 *
 * Env: BENCH_RATE (2000 req/s), BENCH_CONNECTIONS (10), BENCH_SECONDS (60), BENCH_WARMUP_SECONDS
 * (5), BENCH_ROWS (1000000 wakes pre-stored), BENCH_PRUNABLE_ROWS (20000 of them past the 30-day
 * retention, for the pruner to work off during the run), BENCH_WAKE_MODE (next-heartbeat; `now`
 * adds the heartbeat turns), BENCH_CPU_PROF (a directory: run the gateway with `--cpu-prof`).
 */
import { resolve, join } from 'node:path';
import Database from 'better-sqlite3';
import { envChoice, envNumber, log } from './bench-env.js';
import { startGateway, type StartedGateway } from './gateway.js';
import type { BenchContext } from './ingress-bench.js';
import { runOpenLoopLoad, type LatencyPercentiles, type OpenLoopResult } from './open-loop-load.js';
import { sampleProcess, stopChild } from './proc.js';
import { sampleFileSize } from './sample-file-size.js';
import { seedDatabase } from './seed-database.js';

/** The goal for the p99 from due time at the default rate, ms (reported, not enforced). */
const TARGET_P99_MS = 5;

export function latencySettings() {
  const rows = Math.floor(envNumber('BENCH_ROWS', 1_000_000, 0));
  return {
    rate: envNumber('BENCH_RATE', 2000, 1),
    connections: Math.floor(envNumber('BENCH_CONNECTIONS', 10, 1)),
    seconds: envNumber('BENCH_SECONDS', 60, 1),
    warmupSeconds: envNumber('BENCH_WARMUP_SECONDS', 5, 0),
    rows,
    prunableRows: Math.min(rows, Math.floor(envNumber('BENCH_PRUNABLE_ROWS', 20_000, 0))),
    mode: envChoice('BENCH_WAKE_MODE', ['next-heartbeat', 'now'] as const, 'next-heartbeat'),
  };
}
export type LatencySettings = ReturnType<typeof latencySettings>;

/** Upper bound of the latency part's duration, s. */
export function latencyBudgetS(s: LatencySettings): number {
  return 120 + s.rows / 20_000 + s.warmupSeconds + s.seconds + 2 * 15;
}

function countRows(dbPath: string, label: string): { all: number; rows: number; distinctTexts: number } {
  const db = new Database(dbPath, { readonly: true, fileMustExist: true });
  try {
    const all = (db.prepare('SELECT count(*) AS n FROM system_events').get() as { n: number }).n;
    const row = db
      .prepare('SELECT count(*) AS rows, count(DISTINCT text) AS texts FROM system_events WHERE text LIKE ?')
      .get(`${label}-%`) as { rows: number; texts: number };
    return { all, rows: row.rows, distinctTexts: row.texts };
  } finally {
    db.close();
  }
}

const ms = (x: number): string => x.toFixed(2).padStart(8);
const row = (name: string, p: LatencyPercentiles): string =>
  `${name.padEnd(26)}${ms(p.p50)}${ms(p.p90)}${ms(p.p99)}${ms(p.p999)}${ms(p.max)}`;
const mb = (bytes: number): string => `${(bytes / 1_048_576).toFixed(1)} MB`;
const n = (x: number): string => x.toLocaleString('en-US');

/** Runs the latency part; resolves with whether the ledger balanced (the p99 goal is reported only). */
export async function runLatencyBench(ctx: BenchContext, s: LatencySettings): Promise<boolean> {
  const cpuProfDir = process.env['BENCH_CPU_PROF'];
  log(`latency part: ${JSON.stringify({ ...s, sync: ctx.sync, entry: ctx.entry })}`);
  const dir = join(ctx.root, 'latency');
  const first = await startGateway({ dir, token: ctx.token, sync: ctx.sync });
  await stopChild(first.child);
  const seeded = seedDatabase(first.dbPath, { rows: s.rows, prunable: s.prunableRows, now: Date.now() });
  log(
    `seeded ${n(s.rows)} consumed wakes (${n(s.prunableRows)} past retention) and the last 7 days' ${n(seeded.requests)} request records ` +
      `in ${(seeded.ms / 1000).toFixed(1)} s`,
  );

  const gw: StartedGateway = await startGateway({
    dir,
    token: ctx.token,
    sync: ctx.sync,
    nodeFlags: cpuProfDir === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${resolve(cpuProfDir)}`],
  });
  const load = (seconds: number, label: string): Promise<OpenLoopResult> =>
    runOpenLoopLoad({
      port: gw.port,
      token: ctx.token,
      path: '/hooks/wake',
      rate: s.rate,
      connections: s.connections,
      seconds,
      // The label is a hex run id plus a key, so it needs no JSON escaping.
      bodyPrefix: `{"text":"${label}-`,
      bodySuffix: `","mode":"${s.mode}"}`,
    });

  let warmup: OpenLoopResult | null = null;
  const warmupLabel = `${ctx.runId}-latw`;
  if (s.warmupSeconds > 0) {
    warmup = await load(s.warmupSeconds, warmupLabel);
    log(
      `warm-up: ${n(warmup.ok2xx)} of ${n(warmup.scheduled)} answered 2xx, p99 ${warmup.latency.p99.toFixed(2)} ms from due`,
    );
  }
  const label = `${ctx.runId}-lat`;
  const proc = sampleProcess(gw.child.pid);
  const wal = sampleFileSize(`${gw.dbPath}-wal`);
  const r = await load(s.seconds, label);
  const walBytes = wal.stop();
  const sample = proc.stop();
  if (gw.child.hasExited()) throw new Error(`hookgate died under load:\n${gw.child.output()}`);
  const how = await stopChild(gw.child);
  if (how !== 'exit code 0') log(`hookgate did not stop cleanly (${how}):\n${gw.child.output()}`);

  const stored = countRows(gw.dbPath, label);
  const warmStored = warmup === null ? 0 : countRows(gw.dbPath, warmupLabel).distinctTexts;
  const pruned = s.rows + warmStored + stored.rows - stored.all;
  const ledgerOk =
    r.sent === r.scheduled && r.ok2xx === r.sent && stored.rows === r.ok2xx && stored.distinctTexts === r.ok2xx;
  const warmupOk = warmup === null || (warmup.ok2xx === warmup.scheduled && warmStored === warmup.ok2xx);
  const ok = ledgerOk && warmupOk;

  log('');
  log(
    `Latency (open loop): ${n(s.rate)} req/s scheduled for ${s.seconds} s over ${s.connections} keep-alive connections ` +
      `(a pool, pipelining off), POST /hooks/wake mode=${s.mode}, ${n(s.rows)} wakes pre-stored (${n(s.prunableRows)} past retention), ` +
      `store sync=${ctx.sync}, gateway ${ctx.entry}`,
  );
  log(
    `${''.padEnd(26)}${'p50'.padStart(8)}${'p90'.padStart(8)}${'p99'.padStart(8)}${'p99.9'.padStart(8)}${'max'.padStart(8)}`,
  );
  log(row('from due time, ms', r.latency));
  log(row('from send (server), ms', r.service));
  log(row('waiting for a connection', r.wait));
  log(
    `p99 from due ${r.latency.p99.toFixed(2)} ms, goal <= ${TARGET_P99_MS} ms: ${r.latency.p99 <= TARGET_P99_MS ? 'ok' : 'MISS'}`,
  );
  log(
    `ledger: scheduled ${n(r.scheduled)}, sent ${n(r.sent)}, acknowledged (2xx) ${n(r.ok2xx)}, stored ${n(stored.distinctTexts)} ` +
      `(rows ${n(stored.rows)}): ${ledgerOk ? 'balanced' : 'UNBALANCED'}` +
      (r.non2xx + r.lost > 0
        ? ` (non-2xx ${n(r.non2xx)} ${JSON.stringify(r.statusCodes)}, lost ${n(r.lost)}: ${r.firstError})`
        : ''),
  );
  log(
    `achieved ${n(Math.round(r.ok2xx / r.seconds))} req/s; most requests waiting for a connection at once: ${r.maxBacklog}; ` +
      `gateway CPU ${sample.cpuPercent.toFixed(0)}%, max RSS ${mb(sample.maxRssKb * 1024)}; loader CPU ${r.loaderCpuPercent.toFixed(0)}%`,
  );
  log(
    `WAL: max ${mb(walBytes.maxBytes)} during the run; events pruned since the gateway started: ${n(pruned)}; events in the database after: ${n(stored.all)}`,
  );
  if (!warmupOk) log(`warm-up did not balance: ${JSON.stringify(warmup)}`);
  const gwOutput = gw.child.output().trim();
  if (gwOutput !== '') log(`hookgate wrote (last lines):\n${gwOutput.split('\n').slice(-5).join('\n')}`);
  log(
    `BENCH_JSON ${JSON.stringify({
      part: 'latency',
      settings: { ...s, sync: ctx.sync, entry: ctx.entry },
      result: r,
      stored,
      pruned,
      ledgerOk,
      warmupOk,
      walMaxBytes: walBytes.maxBytes,
      gatewayCpuPercent: sample.cpuPercent,
      gatewayMaxRssKb: sample.maxRssKb,
    })}`,
  );
  return ok;
}
