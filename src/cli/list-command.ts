import type { RunRecord, RunState, SystemEventRecord } from '../store/index.js';
import { EXIT_FAILURE, EXIT_OK, type CliDeps } from './cli-deps.js';
import { openStoreOrReport } from './open-store-or-report.js';
import { clip, iso, jsonOutput } from './format.js';
import { runCountsLine } from './run-counts-line.js';

function eventLine(e: SystemEventRecord): string {
  const status = e.consumedAt === null ? 'pending' : 'consumed';
  return `${e.id}  ${iso(e.createdAt)}  ${e.agentId}  ${e.mode}  ${status}  ${clip(e.text, 60)}`;
}

function duration(from: number | null, to: number | null): string {
  return from === null || to === null ? '-' : `${((to - from) / 1000).toFixed(2)}s`;
}

function runLine(r: RunRecord): string {
  const head =
    `${r.id}  ${r.state.padEnd(9)}  created ${iso(r.createdAt)}  queued ${duration(r.createdAt, r.startedAt)}` +
    `  ran ${duration(r.startedAt, r.finishedAt)}  ${r.agentId}  ${r.sessionKey}  ${r.name}  ${r.modelUsed ?? r.model ?? '(default model)'}`;
  const tokens = r.tokens === null ? '' : `  ${r.tokens} tokens`;
  const tail =
    r.heldReason !== null
      ? `\n    held: ${r.heldReason}`
      : r.error !== null
        ? `\n    error: ${clip(r.error, 100)}`
        : r.reply !== null
          ? `\n    reply: ${clip(r.reply, 100)}`
          : '';
  return head + tokens + tail;
}

/**
 * `hookgate events` / `hookgate runs`: reads the store offline, newest first. Runs can be limited
 * to one state; their text listing ends with every run counted by state.
 */
export async function listCommand(
  what: 'events' | 'runs',
  configPath: string,
  options: { json: boolean; limit: number; state?: RunState },
  deps: CliDeps,
): Promise<number> {
  const store = await openStoreOrReport(configPath, deps);
  if (store === 'failed') return EXIT_FAILURE;
  if (store === 'empty') {
    deps.stdout(options.json ? '[]\n' : `No ${what} yet.\n`);
    return EXIT_OK;
  }
  try {
    const items =
      what === 'events'
        ? await store.listSystemEvents({ limit: options.limit })
        : await store.listRuns({
            limit: options.limit,
            ...(options.state === undefined ? {} : { state: options.state }),
          });
    if (options.json) {
      deps.stdout(jsonOutput(items));
    } else {
      const lines =
        what === 'events' ? (items as SystemEventRecord[]).map(eventLine) : (items as RunRecord[]).map(runLine);
      if (lines.length === 0)
        lines.push(options.state === undefined ? `No ${what} yet.` : `No runs in state ${options.state}.`);
      if (what === 'runs') lines.push(runCountsLine(await store.countRuns()));
      deps.stdout(`${lines.join('\n')}\n`);
    }
  } finally {
    await store.close();
  }
  return EXIT_OK;
}
