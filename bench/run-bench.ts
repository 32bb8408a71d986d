/**
 * `npm run bench`: the ingress part (gateway vs bare `node:http` on `POST /hooks/wake`), then the
 * runtime part (agent runs end to end, and the ingress while runs execute), the fleet and
 * retention parts, the latency part (an open-loop rate on a database holding a million rows), and
 * the scale part (the store's claims and listings beside backlogs of that size), the MCP Events
 * part (occurrences fanned out to webhook subscribers: lag and the ingress rate beside them), the relay part (a relay and a home behind it: lag from the sender's answer to the home's commit), and
 * the compare part (this build against an earlier commit's, side by side: compare-bench.ts).
 * Children are loopback child processes; the load comes from this process.
 *
 * Arguments: `--only <part>` (as BENCH_PART), `--base <commit>` (the compare part's, as
 * BENCH_COMPARE_BASE): `npm run bench -- --only compare --base d879cf2`.
 *
 * Env: BENCH_PART (all | ingress | runtime | fleet | retention | latency | scale | mcp | relay | compare), BENCH_LOADER (lean | autocannon), BENCH_ENTRY (bundle,
 * the shipped `dist/bundle/main.js`, when built | src: `dist/src/main.js`), BENCH_SYNC (full;
 * `normal` to see what the per-commit fsync costs), BENCH_TMPDIR (os.tmpdir(); the SQLite files
 * live there, so put it on the disk you care about); each part reads its own (see ingress-bench.ts,
 * run-runtime-bench.ts, latency-bench.ts). Exit code 1 on any non-2xx, socket error, missing durable
 * row, unbalanced latency ledger, failed run or failed start; targets are reported only.
 */
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { createWorkdir, envChoice, log, startWatchdog } from './bench-env.js';
import { gatewayEntry } from './gateway.js';
import { ingressBudgetS, ingressSettings, runIngressBench, type BenchContext } from './ingress-bench.js';
import { runRuntimeBench, runtimeBudgetS, runtimeSettings } from './run-runtime-bench.js';
import { fleetBudgetS, fleetSettings, runFleetBench } from './fleet-bench.js';
import { retentionBudgetS, retentionSettings, runRetentionBench } from './retention-bench.js';
import { latencyBudgetS, latencySettings, runLatencyBench } from './latency-bench.js';
import { runScaleBench, scaleBudgetS, scaleSettings } from './scale-bench.js';
import { mcpBudgetS, mcpSettings, runMcpBench } from './mcp-bench.js';
import { relayBudgetS, relaySettings, runRelayBench } from './relay-bench.js';
import { compareBudgetS, compareSettings, runCompareBench } from './compare-bench.js';

const PARTS = [
  'all',
  'ingress',
  'runtime',
  'fleet',
  'retention',
  'latency',
  'scale',
  'mcp',
  'relay',
  'compare',
] as const;

async function main(): Promise<number> {
  const { values: args } = parseArgs({
    options: { only: { type: 'string' }, base: { type: 'string' } },
    strict: true,
  });
  if (args.only !== undefined) process.env['BENCH_PART'] = args.only;
  const part = envChoice('BENCH_PART', PARTS, 'all');
  const ingress = part === 'all' || part === 'ingress' ? ingressSettings() : null;
  const runtime = part === 'all' || part === 'runtime' ? runtimeSettings() : null;
  const fleet = part === 'all' || part === 'fleet' ? fleetSettings() : null;
  const retention = part === 'all' || part === 'retention' ? retentionSettings() : null;
  const latency = part === 'all' || part === 'latency' ? latencySettings() : null;
  const scale = part === 'all' || part === 'scale' ? scaleSettings() : null;
  const mcp = part === 'all' || part === 'mcp' ? mcpSettings() : null;
  const relay = part === 'all' || part === 'relay' ? relaySettings() : null;
  const compare = part === 'all' || part === 'compare' ? compareSettings(args.base) : null;
  const entry = gatewayEntry();
  const ctx: BenchContext = {
    entry: entry.kind,
    root: createWorkdir(),
    token: randomBytes(24).toString('base64url'),
    runId: randomBytes(4).toString('hex'),
    loader: envChoice('BENCH_LOADER', ['lean', 'autocannon'] as const, 'lean'),
    sync: envChoice('BENCH_SYNC', ['full', 'normal'] as const, 'full'),
  };
  startWatchdog(
    (ingress === null ? 0 : ingressBudgetS(ingress)) +
      (runtime === null ? 0 : runtimeBudgetS(runtime)) +
      (fleet === null ? 0 : fleetBudgetS(fleet)) +
      (retention === null ? 0 : retentionBudgetS(retention)) +
      (latency === null ? 0 : latencyBudgetS(latency)) +
      (scale === null ? 0 : scaleBudgetS(scale)) +
      (mcp === null ? 0 : mcpBudgetS(mcp)) +
      (relay === null ? 0 : relayBudgetS(relay)) +
      (compare === null ? 0 : compareBudgetS(compare)),
  );
  log(
    `hookgate bench: part=${part} loader=${ctx.loader} sync=${ctx.sync} gateway=${entry.kind} (${entry.path}), state under ${ctx.root}`,
  );
  let ok = true;
  if (ingress !== null) ok = (await runIngressBench(ctx, ingress)) && ok;
  if (runtime !== null) {
    if (ingress !== null) log('');
    ok = (await runRuntimeBench(ctx, runtime)) && ok;
  }
  if (fleet !== null) {
    log('');
    ok = (await runFleetBench(ctx, fleet)) && ok;
  }
  if (retention !== null) {
    log('');
    ok = (await runRetentionBench(ctx, retention)) && ok;
  }
  if (latency !== null) {
    log('');
    ok = (await runLatencyBench(ctx, latency)) && ok;
  }
  if (scale !== null) {
    log('');
    ok = (await runScaleBench(ctx, scale)) && ok;
  }
  if (mcp !== null) {
    log('');
    ok = (await runMcpBench(ctx, mcp)) && ok;
  }
  if (relay !== null) {
    log('');
    ok = (await runRelayBench(ctx, relay)) && ok;
  }
  if (compare !== null) {
    log('');
    ok = (await runCompareBench(ctx, compare)) && ok;
  }
  return ok ? 0 : 1;
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
