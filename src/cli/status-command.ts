import { resolveRunBudgets } from '../policy/index.js';
import type {
  BudgetReport,
  CatchUpRecord,
  DispatchHold,
  QueueStats,
  RunBudgets,
  RunCounts,
  StoreSize,
} from '../store/index.js';
import { EXIT_FAILURE, EXIT_OK, type CliDeps } from './cli-deps.js';
import { iso, jsonOutput } from './format.js';
import { loadOrReport } from './load-or-report.js';
import { openStoreOrReport } from './open-store-or-report.js';
import { runCountsLine } from './run-counts-line.js';

/** `1.5 MiB`: bytes in the largest binary unit that keeps the number at or above 1. */
export function formatBytes(bytes: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return unit === 0 ? `${bytes} B` : `${value.toFixed(1)} ${units[unit]}`;
}

/** `2h 03m`, `4m 12s`, `9s`: an age for people, to the second. */
export function formatAge(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${String(s % 60).padStart(2, '0')}s`;
  if (s < 86_400) return `${Math.floor(s / 3600)}h ${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
  return `${Math.floor(s / 86_400)}d ${String(Math.floor((s % 86_400) / 3600)).padStart(2, '0')}h`;
}

function queueLine(name: string, count: number, oldestAt: number | null, now: number): string {
  const oldest = oldestAt === null ? '' : `  oldest ${formatAge(now - oldestAt)} (since ${iso(oldestAt)})`;
  return `  ${name.padEnd(19)}${String(count).padStart(7)}${oldest}`;
}

const n = (v: number): string => v.toLocaleString('en-US');

/**
 * One line a budgeted key: each limit it has beside what it used, for example
 * `agent "main"  runs this hour 3 / 60, tokens in 24 h 1,200 / 2,000,000`.
 */
export function formatBudgets(budgets: RunBudgets, used: BudgetReport): string[] {
  const lines: string[] = [];
  for (const [scope, label] of [
    ['agents', 'agent'],
    ['hooks', 'mapping'],
  ] as const) {
    for (const [key, b] of Object.entries(budgets[scope])) {
      const u = used[scope][key] ?? { started: 0, tokens: 0, running: 0 };
      const parts = [
        b.runsPerHour === undefined ? null : `runs this hour ${n(u.started)} / ${n(b.runsPerHour)}`,
        b.tokensPerDay === undefined ? null : `tokens in 24 h ${n(u.tokens)} / ${n(b.tokensPerDay)}`,
        b.maxConcurrentRuns === undefined ? null : `running ${n(u.running)} / ${n(b.maxConcurrentRuns)}`,
      ].filter((p) => p !== null);
      lines.push(`  ${`${label} "${key}"`.padEnd(19)}${parts.join(', ')}`);
    }
  }
  return lines;
}

/** One line a dispatch hold: what it holds, since when, and the operator's note. */
export function formatHolds(holds: readonly DispatchHold[], now: number): string[] {
  if (holds.length === 0) return ['Dispatch: running (no hold)'];
  return [
    'Dispatch held (requests are still accepted):',
    ...holds.map((h) => {
      const what = h.scope === 'all' ? 'all dispatch' : `${h.scope} "${h.key}"`;
      const note = h.note === null ? '' : `: ${h.note}`;
      return `  ${what.padEnd(19)}${h.kind === 'drain' ? 'drained' : 'paused'} ${formatAge(now - h.at)} ago (since ${iso(h.at)})${note}`;
    }),
  ];
}

/** One line a catch-up mapping: how far its provider's record was read and handled, and its last event. */
export function formatCatchUps(positions: readonly CatchUpRecord[], now: number): string[] {
  if (positions.length === 0) return [];
  return [
    'Catch-up (handled up to):',
    ...positions.map((p) => {
      const who = `mapping "${p.mappingId}"`.padEnd(19);
      if (p.cursorAt === null) return `  ${who}no pass has finished yet`;
      const last = p.lastId === null ? '' : `, last event ${p.lastId}`;
      return `  ${who}${iso(p.cursorAt)} (${formatAge(now - p.cursorAt)} ago)${last}`;
    }),
  ];
}

/** The report `hookgate status` prints. */
function formatStatus(
  s: {
    where: string;
    queues: QueueStats;
    runs: RunCounts;
    size: StoreSize;
    budgets?: { set: RunBudgets; used: BudgetReport };
    holds?: readonly DispatchHold[];
    catchUps?: readonly CatchUpRecord[];
  },
  now: number,
): string {
  const q = s.queues;
  const parts = s.size.parts.map((p) => `${p.name} ${formatBytes(p.bytes)}`).join(', ');
  return [
    'Queues:',
    queueLine('runs queued', q.queuedRuns, q.oldestQueuedRunAt, now),
    queueLine('runs held', q.heldRuns, null, now),
    queueLine('runs running', q.runningRuns, null, now),
    queueLine('events pending', q.pendingEvents, q.oldestPendingEventAt, now),
    queueLine('deliveries pending', q.pendingDeliveries, q.oldestPendingDeliveryAt, now),
    runCountsLine(s.runs),
    ...(s.holds === undefined ? [] : formatHolds(s.holds, now)),
    ...(s.catchUps === undefined ? [] : formatCatchUps(s.catchUps, now)),
    ...(s.budgets === undefined ? [] : ['Budgets (used / limit):', ...formatBudgets(s.budgets.set, s.budgets.used)]),
    `Store: ${s.where}, ${formatBytes(s.size.totalBytes)} (${parts})`,
    '',
  ].join('\n');
}

/** `hookgate status`: queue depths, oldest pending ages, runs by state and store size, read beside a running gateway. */
export async function statusCommand(configPath: string, options: { json: boolean }, deps: CliDeps): Promise<number> {
  const loaded = loadOrReport(configPath, deps, { readOnly: true });
  if (loaded === null) return EXIT_FAILURE;
  const sc = loaded.config.store;
  const where = sc.driver === 'sqlite' ? `sqlite ${sc.path}` : `postgres schema ${sc.schema}`;
  const store = await openStoreOrReport(configPath, deps);
  if (store === 'failed') return EXIT_FAILURE;
  if (store === 'empty') {
    deps.stdout(options.json ? 'null\n' : `No store yet (${where}): no gateway has run with this config.\n`);
    return EXIT_OK;
  }
  try {
    const now = deps.now?.() ?? Date.now();
    const set = resolveRunBudgets(loaded.config);
    const report = {
      where,
      queues: await store.readQueueStats(),
      runs: await store.countRuns(),
      size: await store.readStoreSize(),
      holds: await store.listHolds(),
      catchUps: await store.listCatchUps(),
      ...(set === undefined ? {} : { budgets: { set, used: await store.readBudgetUsage(set) } }),
    };
    deps.stdout(options.json ? jsonOutput({ at: now, ...report }) : formatStatus(report, now));
  } finally {
    await store.close();
  }
  return EXIT_OK;
}
