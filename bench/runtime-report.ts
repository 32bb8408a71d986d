/** Summary table and `BENCH_RUNTIME_JSON` shape of the runtime part. */
import type { LoadResult } from './load-result.js';
import type { RunStats } from './runtime-db.js';

export interface ScenarioResult {
  provider: 'echo' | 'fake';
  maxConcurrentRuns: number;
  runs: number;
  /** 2xx of `POST /hooks/agent` per second while enqueuing (runs already execute meanwhile). */
  acceptedPerS: number;
  accepted: number;
  enqueueNon2xx: number;
  enqueueErrors: number;
  /** Runs finished per second, first accept (`created_at`) to last `finished_at`. */
  completedPerS: number;
  spanMs: number;
  latencyP50Ms: number;
  latencyP99Ms: number;
  execP50Ms: number;
  execP99Ms: number;
  succeeded: number;
  failed: number;
  byState: Record<string, number>;
  maxRssMb: number;
  /** Gateway CPU from first request to last run finished, % of one core, and per run. */
  gatewayCpuPercent: number;
  gatewayCpuUsPerRun: number;
  /** Chat completions the fake answered (null for echo): one per run means no retries. */
  providerCalls: number | null;
  ok: boolean;
}

export interface WakeWindow {
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
  gatewayCpuPercent: number;
  /** Runs that finished during the window. */
  runsFinished: number;
}

export interface BusyRound {
  idle: WakeWindow;
  busy: WakeWindow;
  /** Runs queued just before the busy window, and how fast the ingress took them. */
  queued: number;
  queuedPerS: number;
  /** Runs still open when the busy window ended: the pool was busy throughout. */
  openAfter: number;
}

export interface BusyIngressResult {
  delayMs: number;
  maxConcurrentRuns: number;
  runsPerRound: number;
  rounds: BusyRound[];
  /** Means over rounds. */
  idle: { rps: number; p99: number; gatewayCpuPercent: number };
  busy: { rps: number; p99: number; gatewayCpuPercent: number };
  /** busy req/s / idle req/s (means). */
  ratio: number;
  failedRuns: number;
  ok: boolean;
}

export interface RuntimeSummary {
  settings: Record<string, unknown>;
  scenarios: ScenarioResult[];
  ingressUnderLoad: BusyIngressResult | null;
  ok: boolean;
}

const r = (x: number, d = 0): string => (Number.isFinite(x) ? x.toFixed(d) : 'n/a');

export function scenarioOf(
  s: RunStats,
): Pick<
  ScenarioResult,
  'spanMs' | 'latencyP50Ms' | 'latencyP99Ms' | 'execP50Ms' | 'execP99Ms' | 'succeeded' | 'failed' | 'byState'
> {
  return {
    spanMs: s.spanMs,
    latencyP50Ms: s.latencyP50,
    latencyP99Ms: s.latencyP99,
    execP50Ms: s.execP50,
    execP99Ms: s.execP99,
    succeeded: s.byState['succeeded'] ?? 0,
    failed: s.total - (s.byState['succeeded'] ?? 0),
    byState: s.byState,
  };
}

export function wakeWindow(load: LoadResult, gatewayCpuPercent: number, runsFinished: number): WakeWindow {
  return {
    rps: Math.round(load.rps),
    p50: Number(load.p50.toFixed(3)),
    p99: Number(load.p99.toFixed(3)),
    non2xx: load.non2xx,
    errors: load.errors,
    gatewayCpuPercent: Math.round(gatewayCpuPercent),
    runsFinished,
  };
}

export function scenarioLine(s: ScenarioResult): string {
  return (
    `runtime ${s.provider} c=${s.maxConcurrentRuns}: accepted ${s.accepted} at ${r(s.acceptedPerS)}/s, ` +
    `finished ${s.succeeded} ok / ${s.failed} not in ${r(s.spanMs / 1000, 2)} s (${r(s.completedPerS)}/s), ` +
    `accept->done p50 ${r(s.latencyP50Ms)} p99 ${r(s.latencyP99Ms)} ms, exec p50 ${r(s.execP50Ms)} p99 ${r(s.execP99Ms)} ms, ` +
    `rss ${r(s.maxRssMb, 1)} MB, gw cpu ${r(s.gatewayCpuPercent)}% (${r(s.gatewayCpuUsPerRun)} us/run)` +
    (s.providerCalls === null ? '' : `, provider calls ${s.providerCalls}`)
  );
}

export function formatRuntimeSummary(sum: RuntimeSummary): string {
  const pad = (s: string, n: number): string => s.padEnd(n);
  const out: string[] = [];
  const st = sum.settings;
  if (sum.scenarios.length > 0) {
    out.push(
      `Runtime summary: ${String(st['runs'])} runs per scenario, POST /hooks/agent from ${String(st['connections'])} connections ` +
        `(deliver:false, wakeMode next-heartbeat), heartbeat off, store sync=${String(st['sync'])}, loader ${String(st['loader'])}, gateway ${String(st['entry'])}`,
    );
    out.push(
      [
        pad('scenario', 14),
        pad('accepted/s', 12),
        pad('completed/s', 13),
        pad('accept->done p50/p99 ms', 25),
        pad('exec p50/p99 ms', 17),
        pad('max RSS MB', 12),
        pad('gw CPU us/run', 15),
        'succeeded/failed',
      ]
        .join('')
        .trimEnd(),
    );
    for (const s of sum.scenarios) {
      out.push(
        [
          pad(`${s.provider} c=${s.maxConcurrentRuns}`, 14),
          pad(r(s.acceptedPerS), 12),
          pad(r(s.completedPerS), 13),
          pad(`${r(s.latencyP50Ms)} / ${r(s.latencyP99Ms)}`, 25),
          pad(`${r(s.execP50Ms)} / ${r(s.execP99Ms)}`, 17),
          pad(r(s.maxRssMb, 1), 12),
          pad(r(s.gatewayCpuUsPerRun), 15),
          `${s.succeeded} / ${s.failed}${s.ok ? '' : '  FAILED'}`,
        ]
          .join('')
          .trimEnd(),
      );
    }
  }
  const b = sum.ingressUnderLoad;
  if (b !== null) {
    out.push(
      `Ingress while runs execute: POST /hooks/wake mode=next-heartbeat, ${String(st['connections'])} connections, ` +
        `${String(st['wakeSeconds'])} s windows, ${b.rounds.length} rounds of (no runs, then ${b.runsPerRound} runs queued); ` +
        `fake provider answers after ${b.delayMs} ms, maxConcurrentRuns ${b.maxConcurrentRuns}`,
    );
    out.push(
      [
        pad('', 16),
        pad('req/s per round', 26),
        pad('mean', 8),
        pad('p99 ms per round', 26),
        pad('gw CPU %', 14),
        'runs finished',
      ].join(''),
    );
    for (const [name, key] of [
      ['no runs', 'idle'],
      ['runs executing', 'busy'],
    ] as const) {
      const ws = b.rounds.map((x) => x[key]);
      out.push(
        [
          pad(name, 16),
          pad(ws.map((w) => w.rps).join(' / '), 26),
          pad(String(b[key].rps), 8),
          pad(ws.map((w) => r(w.p99, 2)).join(' / '), 26),
          pad(ws.map((w) => w.gatewayCpuPercent).join(' / '), 14),
          ws.map((w) => w.runsFinished).join(' / '),
        ]
          .join('')
          .trimEnd(),
      );
    }
    out.push(
      `ratio busy/idle req/s ${b.ratio.toFixed(3)}, p99 ${r(b.busy.p99 / b.idle.p99, 2)}x; ` +
        `runs open after each busy window ${b.rounds.map((x) => x.openAfter).join(' / ')}; failed runs ${b.failedRuns}`,
    );
  }
  out.push(
    `Result: ${sum.ok ? 'OK' : 'FAILED'} (every run succeeded, no non-2xx or socket errors, pool busy through the busy window)`,
  );
  return out.join('\n');
}
