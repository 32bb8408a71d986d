import { setTimeout as sleep } from 'node:timers/promises';
import { parseDurationMs } from '../common/parse-duration.js';
import type { LoadedConfig } from '../config/index.js';
import { compileMappings } from '../hooks/index.js';
import { resolveDefaultAgentId } from '../policy/index.js';
import {
  ALL_KEY,
  resolveHoldSelection,
  type DispatchHold,
  type HoldScope,
  type HoldSelection,
  type InFlight,
  type Store,
} from '../store/index.js';
import { callAdmin } from './call-admin.js';
import { EXIT_FAILURE, EXIT_OK, EXIT_USAGE, type CliDeps } from './cli-deps.js';
import { loadOrReport } from './load-or-report.js';

/** How often `drain` looks at the work in flight. */
const DRAIN_POLL_MS = 1000;
/** How long `drain` waits for the work in flight to finish. */
const DEFAULT_DRAIN_TIMEOUT = '10m';

/** The agents and mappings of a config, as a hold may name them. */
function knownHoldKeys(loaded: LoadedConfig): { agents: string[]; mappings: string[] } {
  const { agents, hooks } = loaded.config;
  return {
    agents: agents.list.length > 0 ? agents.list.map((a) => a.id) : [resolveDefaultAgentId(agents)],
    mappings: compileMappings(hooks, loaded.transformsDir).map((m) => m.id),
  };
}

/** `mapping "github"`, `agent "main"`, `all dispatch`. */
const describeHold = (scope: HoldScope, key: string): string =>
  scope === 'all' ? 'all dispatch' : `${scope} "${key}"`;

/** What a hold holds, in words. */
function covers(scope: HoldScope): string {
  switch (scope) {
    case 'all':
      return 'no run, heartbeat turn or delivery starts';
    case 'agent':
      return 'its runs, heartbeat turns and deliveries wait; what is claimed already finishes';
    case 'mapping':
      return "its runs and their replies' deliveries wait (its wakes still reach the agent's main session)";
  }
}

/** `1 run, 2 deliveries, 0 heartbeat turns in flight`. */
function formatInFlight(f: InFlight): string {
  const n = (v: number, one: string, many: string): string => `${v} ${v === 1 ? one : many}`;
  return `${n(f.runs, 'run', 'runs')}, ${n(f.deliveries, 'delivery', 'deliveries')}, ${n(f.heartbeats, 'heartbeat turn', 'heartbeat turns')} in flight`;
}

const idle = (f: InFlight): boolean => f.runs + f.deliveries + f.heartbeats === 0;

/** Opens the store for a hold change; reports and returns `null` when it cannot. */
async function openForHolds(loaded: LoadedConfig, deps: CliDeps, verb: string): Promise<Store | null> {
  try {
    return await deps.openStore(loaded, { mode: 'write' });
  } catch (error) {
    deps.stderr(`hookgate ${verb}: ${(error as Error).message}\n`);
    return null;
  }
}

/**
 * `hookgate pause --all | --agent ID | --mapping ID [--note TEXT]`: a hold in the store, so every
 * replica's next claim honours it and it outlasts restarts. Requests are still accepted and stored.
 */
export async function pauseCommand(
  configPath: string,
  given: HoldSelection & { note?: string | undefined },
  deps: CliDeps,
): Promise<number> {
  const loaded = loadOrReport(configPath, deps);
  if (loaded === null) return EXIT_FAILURE;
  const chosen = resolveHoldSelection(given, knownHoldKeys(loaded));
  if (!chosen.ok) {
    deps.stderr(`hookgate pause: ${chosen.message}\n`);
    return EXIT_USAGE;
  }
  const store = await openForHolds(loaded, deps, 'pause');
  if (store === null) return EXIT_FAILURE;
  try {
    const note = given.note?.trim() ? given.note.trim() : null;
    await store.setHold({ ...chosen, kind: 'pause', note, at: deps.now?.() ?? Date.now() });
    const what = describeHold(chosen.scope, chosen.key);
    deps.stdout(
      `Paused ${what}: ${covers(chosen.scope)}. Requests are still accepted and stored.\n` +
        `Resume with: hookgate resume ${selectorFlag(chosen.scope, chosen.key)}\n`,
    );
    return EXIT_OK;
  } finally {
    await store.close();
  }
}

const selectorFlag = (scope: HoldScope, key: string): string => (scope === 'all' ? '--all' : `--${scope} ${key}`);

/** `hookgate resume --all | --agent ID | --mapping ID | --replica`: lifts a hold (or this machine's replica's drain). */
export async function resumeCommand(
  configPath: string,
  given: HoldSelection & { replica?: boolean },
  deps: CliDeps,
): Promise<number> {
  const loaded = loadOrReport(configPath, deps);
  if (loaded === null) return EXIT_FAILURE;
  if (given.replica === true) {
    const answer = await callAdmin(loaded, 'POST', '/dispatch/resume?replica=1', deps);
    if (answer === null) return EXIT_FAILURE;
    deps.stdout(answer['resumed'] === true ? 'This replica claims work again.\n' : 'This replica was not draining.\n');
    return EXIT_OK;
  }
  const store = await openForHolds(loaded, deps, 'resume');
  if (store === null) return EXIT_FAILURE;
  try {
    const chosen = resolveHoldSelection(given, { ...knownHoldKeys(loaded), held: await store.listHolds() });
    if (!chosen.ok) {
      deps.stderr(`hookgate resume: ${chosen.message}\n`);
      return EXIT_USAGE;
    }
    const what = describeHold(chosen.scope, chosen.key);
    const resumed = await store.releaseHold(chosen.scope, chosen.key);
    const others = (await store.listHolds()).map((h) => describeHold(h.scope, h.key));
    deps.stdout(
      `${resumed ? `Resumed ${what}.` : `${what} was not held.`}` +
        `${others.length === 0 ? '' : ` Still held: ${others.join(', ')}.`}\n`,
    );
    return EXIT_OK;
  } finally {
    await store.close();
  }
}

/**
 * `hookgate drain [--timeout 10m] [--replica]`: holds dispatch (the fleet, in the store; or, with
 * `--replica`, only the gateway of this config, through its admin API), then waits until nothing
 * is in flight. Exit 0 once drained; 1 when the timeout passes first (the hold stays).
 */
export async function drainCommand(
  configPath: string,
  options: { timeout?: string | undefined; replica?: boolean; note?: string | undefined },
  deps: CliDeps,
): Promise<number> {
  const timeoutMs = parseDurationMs(options.timeout ?? DEFAULT_DRAIN_TIMEOUT);
  if (timeoutMs === null) {
    deps.stderr(`hookgate drain: --timeout must be a duration such as 90s or 10m\n`);
    return EXIT_USAGE;
  }
  const loaded = loadOrReport(configPath, deps);
  if (loaded === null) return EXIT_FAILURE;
  const now = deps.now ?? Date.now;
  const wait = deps.sleep ?? ((ms: number) => sleep(ms));
  let readInFlight: () => Promise<InFlight | null>;
  let close = async (): Promise<void> => undefined;
  if (options.replica === true) {
    if ((await callAdmin(loaded, 'POST', '/dispatch/drain?replica=1', deps)) === null) return EXIT_FAILURE;
    readInFlight = async () => {
      const state = await callAdmin(loaded, 'GET', '/dispatch', deps);
      return state === null ? null : ((state['replica'] as { inFlight: InFlight }).inFlight ?? null);
    };
    deps.stdout('This replica drains: it claims nothing new; requests are still accepted and stored.\n');
  } else {
    const store = await openForHolds(loaded, deps, 'drain');
    if (store === null) return EXIT_FAILURE;
    close = () => store.close();
    const note = options.note?.trim() ? options.note.trim() : null;
    const hold: DispatchHold = { scope: 'all', key: ALL_KEY, kind: 'drain', note, at: now() };
    await store.setHold(hold);
    readInFlight = () => store.readInFlight();
    deps.stdout('Draining: no replica claims new work; requests are still accepted and stored.\n');
  }
  try {
    const deadline = now() + timeoutMs;
    let last = '';
    for (;;) {
      const f = await readInFlight();
      if (f === null) return EXIT_FAILURE;
      const line = formatInFlight(f);
      if (idle(f)) {
        deps.stdout(
          options.replica === true
            ? 'Drained: nothing in flight on this replica. It claims again after "hookgate resume --replica" or a restart.\n'
            : 'Drained: nothing in flight. Dispatch stays held until "hookgate resume --all".\n',
        );
        return EXIT_OK;
      }
      if (line !== last) deps.stdout(`  ${line}\n`);
      last = line;
      if (now() >= deadline) {
        deps.stderr(`hookgate drain: not drained within ${options.timeout ?? DEFAULT_DRAIN_TIMEOUT}: ${line}\n`);
        return EXIT_FAILURE;
      }
      await wait(Math.min(DRAIN_POLL_MS, Math.max(0, deadline - now())));
    }
  } finally {
    await close();
  }
}
