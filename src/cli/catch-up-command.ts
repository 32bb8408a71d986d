import { setTimeout as sleep } from 'node:timers/promises';
import { createRequestRecorder } from '../admin/index.js';
import { catchUpTargets, createCatchUp, type CatchUpReport } from '../catch-up/index.js';
import { systemClock } from '../common/clock.js';
import { createIds } from '../common/ids.js';
import { createLog } from '../common/log.js';
import { parseDurationMs } from '../common/parse-duration.js';
import { mappingHookId } from '../config/index.js';
import { compileMappings, createHookHandler, createTransformRunner } from '../hooks/index.js';
import { createPolicy } from '../policy/index.js';
import type { Store } from '../store/index.js';
import { EXIT_FAILURE, EXIT_OK, EXIT_USAGE, type CliDeps } from './cli-deps.js';
import { iso, jsonOutput } from './format.js';
import { loadOrReport } from './load-or-report.js';

/** How long `catch-up` waits for another process's pass of a mapping to end, and how often it looks. */
const BUSY_WAIT_MS = 60_000;
const BUSY_RETRY_MS = 500;

/** `2h` (that long ago) or an ISO 8601 time, as ms since the epoch; `null` when it is neither. */
function parseSince(text: string, now: number): number | null {
  const ago = parseDurationMs(text);
  if (ago !== null) return now - ago;
  const at = /^\d{4}-\d{2}-\d{2}/.test(text) ? Date.parse(text) : Number.NaN;
  return Number.isFinite(at) ? at : null;
}

const n = (v: number, one: string, many = `${one}s`): string => `${v} ${v === 1 ? one : many}`;

/** What a pass did, in a sentence an operator reads. */
function formatCatchUp(r: CatchUpReport): string {
  const who = `mapping "${r.mappingId}" (${r.provider})`;
  if (r.outcome === 'busy') return `${who}: another process is catching it up now; nothing done here.`;
  const window =
    r.from === null ? '' : ` from ${iso(r.from)}${r.clamped ? ' (as far back as idempotency keys are kept)' : ''}`;
  const listed = r.provider === 'github' ? n(r.listed, 'delivery', 'deliveries') : n(r.listed, 'event');
  const handled = [
    r.accepted > 0 ? `${r.accepted} accepted` : null,
    r.skipped > 0 ? `${r.skipped} skipped by the transform` : null,
    r.refused > 0 ? `${r.refused} refused by the mapping` : null,
    r.duplicates > 0 ? `${r.duplicates} already here` : null,
    r.redelivered > 0 ? `${r.redelivered} redelivered by GitHub` : null,
  ].filter((p) => p !== null);
  const body = `${who}${window}: ${listed} listed, ${r.missed} missed${handled.length > 0 ? ` (${handled.join(', ')})` : ''}`;
  const more = r.truncated ? '; more remain: run it again' : '';
  return r.outcome === 'failed' ? `${body}; stopped: ${r.error}` : `${body}${more}.`;
}

/**
 * `hookgate catch-up [--mapping ID] [--since TIME]`: a catch-up pass now, in this process, through
 * the same door as the gateway (the mapping, its transform, policy, idempotency), writing the store
 * beside a running gateway or without one. Exit 0 when every pass ran; 1 when one failed or another
 * process held it.
 */
export async function catchUpCommand(
  configPath: string,
  options: { mapping?: string | undefined; since?: string | undefined; json: boolean },
  deps: CliDeps,
): Promise<number> {
  const loaded = loadOrReport(configPath, deps);
  if (loaded === null) return EXIT_FAILURE;
  const { config } = loaded;
  const clock = deps.now === undefined ? systemClock : { ...systemClock, now: deps.now };
  const sinceMs = options.since === undefined ? undefined : parseSince(options.since, clock.now());
  if (sinceMs === null) {
    deps.stderr('hookgate catch-up: --since must be a duration ago (2h) or an ISO time (2026-05-01T08:00Z)\n');
    return EXIT_USAGE;
  }
  const configured = config.hooks.mappings
    .map((m, i) => ({ id: mappingHookId(m, i), catchUp: m.catchUp }))
    .filter((m) => m.catchUp !== undefined);
  if (options.mapping !== undefined && !configured.some((m) => m.id === options.mapping)) {
    const ids = configured.map((m) => m.id);
    deps.stderr(
      `hookgate catch-up: no mapping "${options.mapping}" with catchUp (${ids.length === 0 ? 'none has it' : ids.join(', ')})\n`,
    );
    return EXIT_USAGE;
  }
  const targets = catchUpTargets(loaded).filter(
    (t) => options.mapping === undefined || t.mappingId === options.mapping,
  );
  for (const m of configured) {
    if (options.mapping !== undefined && m.id !== options.mapping) continue;
    if (!targets.some((t) => t.mappingId === m.id)) {
      deps.stderr(`hookgate catch-up: mapping "${m.id}": ${m.catchUp!.tokenEnv} is not set\n`);
      return EXIT_FAILURE;
    }
  }
  if (targets.length === 0) {
    deps.stderr('hookgate catch-up: no mapping has catchUp\n');
    return EXIT_FAILURE;
  }
  let store: Store;
  try {
    store = await deps.openStore(loaded, { mode: 'write' });
  } catch (error) {
    deps.stderr(`hookgate catch-up: ${(error as Error).message}\n`);
    return EXIT_FAILURE;
  }
  const ids = createIds(clock.now);
  const runTransform = createTransformRunner(loaded.transformsDir, {
    maxProcesses: config.hooks.maxTransformProcesses,
  });
  let recordError: unknown;
  try {
    const handleHook = createHookHandler({
      policy: createPolicy({ config, ids, clock }),
      store,
      clock,
      mappings: compileMappings(config.hooks, loaded.transformsDir),
      runTransform,
      idempotencyWindowSeconds: config.hooks.idempotencyWindowSeconds,
      maxWaitSeconds: config.hooks.maxWaitSeconds,
    });
    const observer = createRequestRecorder({
      store,
      recordPayloads: config.gateway.recordPayloads,
      clock,
      ids,
      onError: (error) => {
        recordError ??= error;
      },
    });
    const catchUp = createCatchUp({
      store,
      handleHook,
      hooksPath: () => config.hooks.path,
      observer,
      horizonMs: () => config.hooks.idempotencyWindowSeconds * 1000,
      clock,
      // The command reports through its output; the pass's own lines would only repeat it.
      log: createLog({ level: 'silent' }),
      owner: `${process.pid}:cli`,
      targets: () => targets,
    });
    const reports: CatchUpReport[] = [];
    for (const t of targets) {
      // A gateway's own pass holds the mapping's lease for as long as it runs: wait for it.
      let report: CatchUpReport | undefined;
      for (let waited = 0; ; waited += BUSY_RETRY_MS) {
        [report] = await catchUp.runNow(t.mappingId, sinceMs === undefined ? {} : { sinceMs });
        if (report?.outcome !== 'busy' || waited >= BUSY_WAIT_MS) break;
        await (deps.sleep ?? ((ms: number) => sleep(ms)))(BUSY_RETRY_MS);
      }
      if (report !== undefined) reports.push(report);
    }
    await catchUp.stop();
    if (options.json) deps.stdout(jsonOutput(reports));
    else for (const r of reports) (r.outcome === 'done' ? deps.stdout : deps.stderr)(`${formatCatchUp(r)}\n`);
    return reports.every((r) => r.outcome === 'done') ? EXIT_OK : EXIT_FAILURE;
  } finally {
    await runTransform.close();
    await store.close();
    if (recordError !== undefined)
      deps.stderr(`hookgate catch-up: a request record was not written: ${(recordError as Error).message}\n`);
  }
}
