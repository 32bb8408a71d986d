import { existsSync } from 'node:fs';
import type { RunRecord, SystemEventRecord } from '../store/index.js';
import { EXIT_FAILURE, EXIT_OK, type CliDeps } from './cli-deps.js';
import { loadOrReport } from './load-or-report.js';

const iso = (ms: number | null): string => (ms === null ? '-' : new Date(ms).toISOString());

function clip(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ');
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

function eventLine(e: SystemEventRecord): string {
  const status = e.consumedAt === null ? 'pending' : 'consumed';
  return `${e.id}  ${iso(e.createdAt)}  ${e.agentId}  ${e.mode}  ${status}  ${clip(e.text, 60)}`;
}

function runLine(r: RunRecord): string {
  return `${r.id}  ${iso(r.createdAt)}  ${r.state}  ${r.agentId}  ${r.sessionKey}  ${r.name}  ${r.model ?? '(default model)'}`;
}

/** `hookgate events` / `hookgate runs`: reads the store offline, newest first. */
export async function listCommand(
  what: 'events' | 'runs',
  configPath: string,
  options: { json: boolean; limit: number },
  deps: CliDeps,
): Promise<number> {
  const loaded = loadOrReport(configPath, deps);
  if (loaded === null) return EXIT_FAILURE;
  const { store: storeConfig } = loaded.config;
  if (storeConfig.driver === 'sqlite' && !existsSync(storeConfig.path)) {
    deps.stdout(options.json ? '[]\n' : `No ${what} yet (no store at ${storeConfig.path}).\n`);
    return EXIT_OK;
  }
  const store = deps.openStore(loaded, { readonly: true });
  try {
    const items = what === 'events'
      ? await store.listSystemEvents({ limit: options.limit })
      : await store.listRuns({ limit: options.limit });
    if (options.json) {
      deps.stdout(`${JSON.stringify(items, null, 2)}\n`);
    } else if (items.length === 0) {
      deps.stdout(`No ${what} yet.\n`);
    } else {
      const lines = what === 'events'
        ? (items as SystemEventRecord[]).map(eventLine)
        : (items as RunRecord[]).map(runLine);
      deps.stdout(`${lines.join('\n')}\n`);
    }
  } finally {
    await store.close();
  }
  return EXIT_OK;
}
