/** Aggregation of the runs, the human summary table and the `BENCH_JSON` line. */
import type { LoadResult, Loader } from './load.js';

export interface ServerRuns {
  warmup: LoadResult | null;
  rounds: LoadResult[];
  /** Max VmRSS seen while under load (warm-up and rounds), kB. */
  maxRssKb: number;
  /** Server CPU per round, % of one core. */
  cpuPercent: number[];
}

export interface ServerSummary {
  rps: number;
  rpsRounds: number[];
  p50: number;
  p99: number;
  p50Rounds: number[];
  p99Rounds: number[];
  maxRssMb: number;
  cpuPercentRounds: number[];
  /** Server CPU time per answered request, µs (mean of rounds): less sensitive to a saturated loader. */
  cpuUsPerRequest: number;
  loaderCpuPercentRounds: number[];
  /** Totals over warm-up and rounds. */
  ok2xx: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  statusCodes: Record<string, number>;
  firstError: string | null;
}

export interface Summary {
  settings: {
    sync: 'full' | 'normal';
    mode: 'now' | 'next-heartbeat';
    seconds: number;
    rounds: number;
    connections: number;
    warmupSeconds: number;
    startRuns: number;
    loader: Loader;
    entry: 'bundle' | 'src';
  };
  bare: ServerSummary;
  hookgate: ServerSummary;
  ratio: number;
  startup: { ms: number[]; medianMs: number; maxMs: number };
  durability: { rows: number; distinctTexts: number; ok2xx: number; ok: boolean };
  targets: { ratio: boolean; p99: boolean; rss: boolean; startup: boolean };
  /** No non-2xx, no socket errors, every 2xx durably stored. Targets do not count. */
  ok: boolean;
}

export const TARGETS = { ratio: 0.6, p99Ms: 4, rssMb: 120, startupS: 0.5 } as const;

const mean = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
const round = (x: number, digits: number): number => Number(x.toFixed(digits));

export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? (s[mid] ?? Number.NaN) : ((s[mid - 1] ?? Number.NaN) + (s[mid] ?? Number.NaN)) / 2;
}

export function summarizeServer(runs: ServerRuns): ServerSummary {
  const all = runs.warmup === null ? runs.rounds : [runs.warmup, ...runs.rounds];
  const statusCodes: Record<string, number> = {};
  for (const r of all)
    for (const [code, n] of Object.entries(r.statusCodes)) statusCodes[code] = (statusCodes[code] ?? 0) + n;
  const rpsRounds = runs.rounds.map((r) => r.rps);
  const p50Rounds = runs.rounds.map((r) => r.p50);
  const p99Rounds = runs.rounds.map((r) => r.p99);
  return {
    rps: round(mean(rpsRounds), 0),
    rpsRounds: rpsRounds.map((x) => round(x, 0)),
    p50: round(mean(p50Rounds), 3),
    p99: round(mean(p99Rounds), 3),
    p50Rounds: p50Rounds.map((x) => round(x, 3)),
    p99Rounds: p99Rounds.map((x) => round(x, 3)),
    maxRssMb: round(runs.maxRssKb / 1024, 1),
    cpuPercentRounds: runs.cpuPercent.map((x) => round(x, 0)),
    cpuUsPerRequest: round(mean(runs.rounds.map((r, i) => (((runs.cpuPercent[i] ?? 0) / 100) * 1e6) / r.rps)), 1),
    loaderCpuPercentRounds: runs.rounds.map((r) => round(r.loaderCpuPercent, 0)),
    ok2xx: all.reduce((a, r) => a + r.ok2xx, 0),
    non2xx: all.reduce((a, r) => a + r.non2xx, 0),
    errors: all.reduce((a, r) => a + r.errors, 0),
    timeouts: all.reduce((a, r) => a + r.timeouts, 0),
    statusCodes,
    firstError: all.find((r) => r.firstError !== null)?.firstError ?? null,
  };
}

const mark = (ok: boolean): string => (ok ? 'ok' : 'MISS');
const pad = (s: string, n: number): string => s.padEnd(n);

/** The compact table printed at the end of a run. */
export function formatSummary(s: Summary): string {
  const { bare: a, hookgate: b, targets: t } = s;
  const row = (label: string, va: string, vb: string, target = ''): string =>
    `${pad(label, 24)}${pad(va, 26)}${pad(vb, 26)}${target}`.trimEnd();
  const list = (xs: readonly number[]): string => xs.join(' / ');
  const errs = (x: ServerSummary): string => `${x.non2xx} / ${x.errors} (${x.timeouts} t/o)`;
  return [
    `Summary: ${s.settings.rounds} rounds x ${s.settings.seconds} s, ${s.settings.connections} connections, ` +
      `warm-up ${s.settings.warmupSeconds} s, loopback, POST /hooks/wake ` +
      `mode=${s.settings.mode}, store sync=${s.settings.sync}, loader ${s.settings.loader}, gateway ${s.settings.entry}`,
    row('', 'bare node:http (a)', 'hookgate (b)', 'target (b)'),
    row('req/s mean', String(a.rps), String(b.rps)),
    row('req/s per round', list(a.rpsRounds), list(b.rpsRounds)),
    row('ratio b/a', '', s.ratio.toFixed(3), `>= ${TARGETS.ratio}  ${mark(t.ratio)}`),
    row('p50 ms (mean of rounds)', a.p50.toFixed(2), b.p50.toFixed(2)),
    row('p99 ms (mean of rounds)', a.p99.toFixed(2), b.p99.toFixed(2), `<= ${TARGETS.p99Ms}    ${mark(t.p99)}`),
    row('p99 ms per round', list(a.p99Rounds.map((x) => round(x, 2))), list(b.p99Rounds.map((x) => round(x, 2)))),
    row('max RSS MB under load', a.maxRssMb.toFixed(1), b.maxRssMb.toFixed(1), `<= ${TARGETS.rssMb}  ${mark(t.rss)}`),
    row('server CPU % per round', list(a.cpuPercentRounds), list(b.cpuPercentRounds)),
    row(
      'server CPU us / request',
      a.cpuUsPerRequest.toFixed(1),
      b.cpuUsPerRequest.toFixed(1),
      `(cost ratio a/b ${(a.cpuUsPerRequest / b.cpuUsPerRequest).toFixed(3)})`,
    ),
    row('loader CPU % per round', list(a.loaderCpuPercentRounds), list(b.loaderCpuPercentRounds)),
    row('non-2xx / socket errors', errs(a), errs(b)),
    row(
      'startup s median / max',
      '',
      `${(s.startup.medianMs / 1000).toFixed(3)} / ${(s.startup.maxMs / 1000).toFixed(3)}`,
      `<= ${TARGETS.startupS}  ${mark(t.startup)}`,
    ),
    row(
      'durable rows / 2xx',
      '',
      `${s.durability.rows} / ${s.durability.ok2xx}`,
      `rows >= 2xx  ${mark(s.durability.ok)}`,
    ),
    `Result: ${s.ok ? 'OK' : 'FAILED'} (correctness); targets ${Object.values(t).every(Boolean) ? 'all met' : 'not all met'}`,
  ].join('\n');
}
