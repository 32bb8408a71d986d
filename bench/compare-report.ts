/** The compare part's tables, its goals and its `BENCH_COMPARE_JSON` shape. */
import { median } from './report.js';

export interface WakeTarget {
  /** `bare`, or `<build>-default` / `<build>-warn`. */
  key: string;
  label: string;
  /** Per round. */
  rps: number[];
  p99: number[];
  cpuUsPerRequest: number[];
  maxRssMb: number;
  /** Totals over warm-up and rounds. */
  ok2xx: number;
  bad: number;
  /** Events in its store after it stopped (gateways only): at least `ok2xx`. */
  stored: number | null;
  /** Access lines in its output, when it writes them. */
  accessLines: number | null;
}

export interface RunTrial {
  build: string;
  concurrency: number;
  runsPerS: number;
  succeeded: number;
  runs: number;
  maxRssMb: number;
  clean: boolean;
}

export interface CompareSummary {
  head: string;
  base: string;
  settings: Record<string, unknown> & { rounds: number; seconds: number; connections: number; mode: string };
  bundleBytes: Record<string, number | null>;
  wakes: WakeTarget[] | null;
  runs: RunTrial[] | null;
  start: Record<string, { startMs: number[]; idleRssMb: number[] }> | null;
  /** Every request answered 2xx, every acknowledged wake stored, every run succeeded. Goals do not count. */
  ok: boolean;
}

/** The goals this bench checks: wakes against bare and the base, runs, start, memory. */
export const GOALS = { wakesOfBare: 0.55, ofBase: 1, startMs: 200, rssMb: 115 } as const;

const mean = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
const f = (x: number, d: number): string => (Number.isFinite(x) ? x.toFixed(d) : 'n/a');
const range = (xs: readonly number[], d: number): string =>
  xs.length === 0 ? 'n/a' : `${f(Math.min(...xs), d)}-${f(Math.max(...xs), d)}`;
const mark = (ok: boolean): string => (ok ? 'ok' : 'MISS');

/** Each round's ratio of `a` to `b` (the rounds were run side by side). */
const perRound = (a: readonly number[], b: readonly number[]): number[] => a.map((x, i) => x / (b[i] ?? Number.NaN));

interface Goal {
  name: string;
  value: number;
  /** How the value is written. */
  shown: string;
  target: string;
  met: boolean;
}

function wakeTable(s: CompareSummary, wakes: WakeTarget[], goals: Goal[]): string[] {
  const bare = wakes.find((t) => t.key === 'bare');
  const out = [
    `Wakes: ${s.settings.rounds} rounds x ${s.settings.seconds} s, ${s.settings.connections} connections, POST /hooks/wake mode=${s.settings.mode}, each round every target in turn`,
    `${'target'.padEnd(30)}${'req/s'.padEnd(8)}${'of bare'.padEnd(8)}${'per round'.padEnd(13)}${`of ${s.base}`.padEnd(12)}${'per round'.padEnd(13)}${'p99 ms'.padEnd(8)}${'CPU us/req'.padEnd(11)}${'max RSS MB'.padEnd(11)}stored / 2xx, access lines`,
  ];
  for (const t of wakes) {
    const level = t.key.slice(t.key.indexOf('-') + 1);
    const baseTwin = wakes.find((w) => w.key === `${s.base}-${level}`);
    const ofBare = bare === undefined || t === bare ? [] : perRound(t.rps, bare.rps);
    const ofBase =
      baseTwin === undefined || t === baseTwin || t.key.startsWith(s.base) ? [] : perRound(t.rps, baseTwin.rps);
    const stored = t.stored === null ? '' : `${t.stored} / ${t.ok2xx}${t.stored >= t.ok2xx ? '' : ' LOST'}`;
    const access = t.accessLines === null || t.accessLines === 0 ? '' : `, ${t.accessLines}`;
    out.push(
      `${t.label.padEnd(30)}${f(mean(t.rps), 0).padEnd(8)}${(bare === undefined || t === bare ? '' : f(mean(t.rps) / mean(bare.rps), 3)).padEnd(8)}` +
        `${(ofBare.length === 0 ? '' : range(ofBare, 3)).padEnd(13)}` +
        `${(ofBase.length === 0 ? '' : f(mean(t.rps) / mean(baseTwin!.rps), 3)).padEnd(12)}${(ofBase.length === 0 ? '' : range(ofBase, 3)).padEnd(13)}` +
        `${f(mean(t.p99), 2).padEnd(8)}${f(mean(t.cpuUsPerRequest), 1).padEnd(11)}${f(t.maxRssMb, 1).padEnd(11)}${stored}${access}`,
    );
  }
  const now = wakes.find((t) => t.key === 'now-default');
  const nowWarn = wakes.find((t) => t.key === 'now-warn');
  const baseWarn = wakes.find((t) => t.key === `${s.base}-warn`);
  if (now !== undefined && bare !== undefined) {
    const v = mean(now.rps) / mean(bare.rps);
    goals.push({
      name: 'default config wakes, of bare',
      value: v,
      shown: f(v, 3),
      target: `>= ${GOALS.wakesOfBare}`,
      met: v >= GOALS.wakesOfBare,
    });
    goals.push({
      name: 'default config wakes, of a reference gateway',
      value: Number.NaN,
      shown: 'not measured: no reference gateway in this bench',
      target: '',
      met: true,
    });
    goals.push({
      name: 'max RSS under load MB, default config',
      value: now.maxRssMb,
      shown: f(now.maxRssMb, 1),
      target: `<= ${GOALS.rssMb}`,
      met: now.maxRssMb <= GOALS.rssMb,
    });
  }
  if (nowWarn !== undefined && baseWarn !== undefined) {
    const v = mean(nowWarn.rps) / mean(baseWarn.rps);
    goals.push({
      name: `wakes at warn, of ${s.base}`,
      value: v,
      shown: f(v, 3),
      target: `>= ${GOALS.ofBase}`,
      met: v >= GOALS.ofBase,
    });
  }
  return out;
}

function runTable(s: CompareSummary, runs: RunTrial[], goals: Goal[]): string[] {
  const out = [
    `Echo runs: ${runs[0]?.runs ?? 0} agent runs per trial from ${s.settings.connections} connections, default config, a fresh gateway per trial`,
  ];
  out.push(
    `${'maxConcurrentRuns'.padEnd(19)}${'now runs/s'.padEnd(22)}${`${s.base} runs/s`.padEnd(22)}${`now / ${s.base}`.padEnd(16)}max RSS MB now / ${s.base}`,
  );
  for (const c of [...new Set(runs.map((r) => r.concurrency))]) {
    const now = runs.filter((r) => r.concurrency === c && r.build === 'now');
    const base = runs.filter((r) => r.concurrency === c && r.build === s.base);
    const a = now.map((r) => r.runsPerS);
    const b = base.map((r) => r.runsPerS);
    const v = mean(a) / mean(b);
    out.push(
      `${String(c).padEnd(19)}${`${f(mean(a), 0)} (${range(a, 0)})`.padEnd(22)}${`${f(mean(b), 0)} (${range(b, 0)})`.padEnd(22)}${f(v, 3).padEnd(16)}` +
        `${f(Math.max(...now.map((r) => r.maxRssMb)), 1)} / ${f(Math.max(...base.map((r) => r.maxRssMb)), 1)}`,
    );
    goals.push({
      name: `echo runs/s at ${c} concurrent, of ${s.base}`,
      value: v,
      shown: f(v, 3),
      target: `>= ${GOALS.ofBase}`,
      met: v >= GOALS.ofBase,
    });
  }
  return out;
}

function startTable(s: CompareSummary, start: NonNullable<CompareSummary['start']>, goals: Goal[]): string[] {
  const out = ['Start: spawn to the first 200 of /healthz on a fresh state dir, default config; idle RSS 1.5 s later'];
  out.push(`${'build'.padEnd(12)}${'median ms'.padEnd(11)}${'range ms'.padEnd(14)}${'idle RSS MB'.padEnd(13)}bundle`);
  for (const [name, x] of Object.entries(start)) {
    const bytes = s.bundleBytes[name];
    out.push(
      `${name.padEnd(12)}${f(median(x.startMs), 0).padEnd(11)}${range(x.startMs, 0).padEnd(14)}${f(median(x.idleRssMb), 1).padEnd(13)}` +
        `${bytes === null || bytes === undefined ? 'n/a' : `${(bytes / 1e6).toFixed(2)} MB`}`,
    );
  }
  const now = start['now'];
  if (now !== undefined) {
    const v = median(now.startMs);
    goals.push({
      name: 'start to healthy ms, median',
      value: v,
      shown: f(v, 0),
      target: `<= ${GOALS.startMs}`,
      met: v <= GOALS.startMs,
    });
  }
  return out;
}

/** The tables and the goals, as printed at the end of the part. */
export function formatCompare(s: CompareSummary): string {
  const goals: Goal[] = [];
  const out = [
    `Compare: now = ${s.head} against ${s.base}, store sync=${String(s.settings['sync'])}, loader ${String(s.settings['loader'])}`,
  ];
  if (s.wakes !== null) out.push('', ...wakeTable(s, s.wakes, goals));
  if (s.runs !== null) out.push('', ...runTable(s, s.runs, goals));
  if (s.start !== null) out.push('', ...startTable(s, s.start, goals));
  out.push('', `${'goal'.padEnd(48)}${'measured'.padEnd(12)}target`);
  for (const g of goals)
    out.push(
      `${g.name.padEnd(48)}${g.shown.padEnd(12)}${g.target === '' ? '' : `${g.target.padEnd(9)}${mark(g.met)}`}`.trimEnd(),
    );
  out.push(
    `Result: ${s.ok ? 'OK' : 'FAILED'} (correctness); goals ${goals.every((g) => g.met) ? 'all met' : 'not all met'}`,
  );
  return out.join('\n');
}
