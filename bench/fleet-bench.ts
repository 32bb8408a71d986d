/**
 * The fleet part: `/hooks/wake` on SQLite vs PostgreSQL with one replica, then 1, 2 and 3
 * replicas on one PostgreSQL schema (the load split evenly over their ports), with PostgreSQL's
 * share of the machine's CPU; agent runs per second through the echo model across 3 replicas; and
 * claim-to-start latency (a run's commit to a worker starting it) with an idle fleet.
 *
 * Env: BENCH_FLEET_SECONDS (10) per load round, BENCH_FLEET_RUNS (1000), BENCH_FLEET_LATENCY_RUNS (200),
 * HOOKGATE_TEST_POSTGRES_URL (postgres://postgres@127.0.0.1:5432/test).
 */
import { cpus } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { envNumber, log } from './bench-env.js';
import { startGatewayWithConfig, writeGatewayConfig, type StartedGateway } from './gateway.js';
import { runLoad, type LoadResult } from './load.js';
import { samplePostgresCpu } from './postgres-cpu.js';
import { freePort, sampleProcess } from './proc.js';
import { enqueueRuns, stopGateway } from './runtime-common.js';
import type { BenchContext } from './ingress-bench.js';

const POSTGRES_URL = process.env['HOOKGATE_TEST_POSTGRES_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test';

export function fleetSettings() {
  return {
    seconds: envNumber('BENCH_FLEET_SECONDS', 10, 1),
    runs: Math.floor(envNumber('BENCH_FLEET_RUNS', 1000, 1)),
    latencyRuns: Math.floor(envNumber('BENCH_FLEET_LATENCY_RUNS', 200, 1)),
    connections: Math.floor(envNumber('BENCH_CONNECTIONS', 50, 1)),
  };
}
export type FleetSettings = ReturnType<typeof fleetSettings>;
export const fleetBudgetS = (s: FleetSettings): number => 6 * (s.seconds + 15) + 300;

async function query<T>(sql: string, params: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  try {
    return (await client.query(sql, params)).rows as T[];
  } finally {
    await client.end();
  }
}

/** Starts `n` replicas sharing one store section; each gets its own port and config file. */
async function startReplicas(
  ctx: BenchContext,
  tag: string,
  n: number,
  store: Record<string, unknown>,
  extra: Record<string, unknown> = {},
): Promise<StartedGateway[]> {
  const configs: Array<{ path: string; port: number }> = [];
  for (let i = 0; i < n; i++) {
    const port = await freePort();
    const dir = join(ctx.root, `${tag}-${i}`);
    configs.push({
      path: writeGatewayConfig(
        { dir, token: ctx.token, sync: ctx.sync, store, extra },
        port,
        join(dir, 'state', 'hookgate.db'),
      ),
      port,
    });
  }
  return Promise.all(configs.map((c) => startGatewayWithConfig(c.path, c.port, '')));
}

/** One load round split over the replicas' ports; the sum of their goodput, the worst p99. */
async function loadRound(
  ctx: BenchContext,
  gws: StartedGateway[],
  s: FleetSettings,
  label: string,
): Promise<{ rps: number; p99: number; clean: boolean; gwCpu: number; pgCpu: number }> {
  const pgCpu = samplePostgresCpu();
  const samplers = gws.map((g) => sampleProcess(g.child.pid));
  const per = Math.max(1, Math.floor(s.connections / gws.length));
  const results: LoadResult[] = await Promise.all(
    gws.map((g, i) =>
      runLoad({
        loader: ctx.loader,
        port: g.port,
        token: ctx.token,
        connections: per,
        seconds: s.seconds,
        label: `${ctx.runId}-${label}-${i}`,
        mode: 'next-heartbeat',
      }),
    ),
  );
  const seconds = Math.max(...results.map((r) => r.seconds));
  const gwCpu = samplers.map((x) => x.stop().cpuPercent).reduce((a, b) => a + b, 0);
  const pgSeconds = pgCpu.stop();
  return {
    rps: results.reduce((a, r) => a + r.rps, 0),
    p99: Math.max(...results.map((r) => r.p99)),
    clean: results.every((r) => r.non2xx + r.errors === 0),
    gwCpu,
    pgCpu: (100 * pgSeconds) / seconds,
  };
}

const fmt = (r: { rps: number; p99: number; gwCpu: number; pgCpu: number }): string =>
  `${Math.round(r.rps).toLocaleString('en-US')} req/s, p99 ${r.p99.toFixed(1)} ms, gateways ${Math.round(r.gwCpu)}% CPU, PostgreSQL ${Math.round(r.pgCpu)}% CPU (of ${cpus().length * 100}%)`;

export async function runFleetBench(ctx: BenchContext, s: FleetSettings): Promise<boolean> {
  try {
    await query('SELECT 1');
  } catch (error) {
    log(`fleet part SKIPPED: PostgreSQL is not reachable at ${POSTGRES_URL} (${(error as Error).message})`);
    return true;
  }
  log(
    `fleet part: ${s.seconds} s per round, ${s.connections} connections split over the replicas, wakes with mode next-heartbeat`,
  );
  let ok = true;
  const schemas: string[] = [];
  const pgStore = (tag: string): Record<string, unknown> => {
    const schema = `hg_bench_${ctx.runId}_${tag}`;
    schemas.push(schema);
    return { driver: 'postgres', url: POSTGRES_URL, schema };
  };
  try {
    const [sqlite] = await startReplicas(ctx, 'sqlite', 1, {
      driver: 'sqlite',
      path: join(ctx.root, 'fleet-sqlite.db'),
      sync: ctx.sync,
    });
    await loadRound(ctx, [sqlite!], { ...s, seconds: 2 }, 'warm-sqlite');
    const base = await loadRound(ctx, [sqlite!], s, 'sqlite');
    await stopGateway(sqlite!);
    log(`  SQLite, 1 replica:      ${fmt(base)}`);
    ok &&= base.clean;
    for (const n of [1, 2, 3]) {
      const gws = await startReplicas(ctx, `pg${n}`, n, pgStore(`w${n}`));
      await loadRound(ctx, gws, { ...s, seconds: 2 }, `warm-pg${n}`);
      const r = await loadRound(ctx, gws, s, `pg${n}`);
      for (const g of gws) await stopGateway(g);
      log(
        `  PostgreSQL, ${n} replica${n > 1 ? 's' : ' '}: ${fmt(r)}${n === 1 ? `; ${(r.rps / base.rps).toFixed(2)}x SQLite` : ''}`,
      );
      ok &&= r.clean;
    }

    const runStore = pgStore('runs');
    const gws = await startReplicas(ctx, 'runs', 3, runStore, {
      agents: { defaults: { model: 'echo/echo', maxConcurrentRuns: 8, heartbeat: { every: 0 } } },
    });
    const t0 = performance.now();
    const per = Math.ceil(s.runs / gws.length);
    await Promise.all(gws.map((g) => enqueueRuns(g.port, ctx.token, per, 8)));
    const total = per * gws.length;
    for (;;) {
      const [row] = await query<{ open: string }>(
        `SELECT count(*) AS open FROM ${runStore['schema']}.runs WHERE state IN ('queued', 'running')`,
      );
      if (Number(row?.open) === 0) break;
      if (performance.now() - t0 > 300_000) throw new Error('runs did not finish within 300 s');
      await sleep(50);
    }
    const runSeconds = (performance.now() - t0) / 1000;
    const [done] = await query<{ n: string }>(
      `SELECT count(*) AS n FROM ${runStore['schema']}.runs WHERE state = 'succeeded'`,
    );
    log(
      `  agent runs through echo, 3 replicas: ${total} runs in ${runSeconds.toFixed(2)} s = ${Math.round(total / runSeconds)} runs/s (${done?.n} succeeded)`,
    );
    ok &&= Number(done?.n) === total;

    // Idle fleet: one run at a time; commit → claimed by some replica.
    const latencies: number[] = [];
    for (let i = 0; i < s.latencyRuns; i++) {
      const g = gws[i % gws.length]!;
      const res = await fetch(`http://127.0.0.1:${g.port}/hooks/agent`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ctx.token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ message: `latency ${i}`, deliver: false, wakeMode: 'next-heartbeat' }),
      });
      const { runId } = (await res.json()) as { runId: string };
      for (let k = 0; k < 200; k++) {
        const [row] = await query<{ ms: string | null }>(
          `SELECT started_at - created_at AS ms FROM ${runStore['schema']}.runs WHERE id = $1`,
          [runId],
        );
        if (row?.ms != null) {
          latencies.push(Number(row.ms));
          break;
        }
        await sleep(5);
      }
      await sleep(20);
    }
    for (const g of gws) await stopGateway(g);
    latencies.sort((a, b) => a - b);
    const avg = latencies.reduce((a, b) => a + b, 0) / latencies.length;
    const p99 = latencies[Math.min(latencies.length - 1, Math.ceil(0.99 * latencies.length) - 1)] ?? Number.NaN;
    log(
      `  claim-to-start (ingress accepted → a replica started it), idle fleet of 3: avg ${avg.toFixed(1)} ms, p99 ${p99.toFixed(1)} ms over ${latencies.length} runs (target p99 ≤ 10 ms)`,
    );
  } finally {
    for (const schema of schemas) await query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => undefined);
  }
  return ok;
}
