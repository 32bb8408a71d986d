import { randomUUID } from 'node:crypto';
import { parseDurationMs } from '../common/parse-duration.js';
import { mainSessionKey, resolveDefaultAgentId } from '../policy/index.js';
import type { RunRecord } from '../store/index.js';
import { createHeartbeatScheduler, type HeartbeatScheduler } from './create-heartbeat-scheduler.js';
import { createRunSummary, executeRun } from './execute-run.js';
import { RunWorkerPool } from './run-worker-pool.js';
import { runHeartbeatTurn } from './run-heartbeat-turn.js';
import type { RuntimeDeps } from './runtime-deps.js';

export interface RuntimeOptions {
  /** @default 30000 */
  leaseMs?: number;
  /** @default 1000 */
  pollMs?: number;
  /** Window in which heartbeat requests share one turn. @default 250 */
  coalesceMs?: number;
  /** Claims of one run before an expired lease fails it as `interrupted`. @default 3 */
  maxAttempts?: number;
  /**
   * Every `running` run found at startup belongs to a dead process (true for a store only this
   * process uses, such as SQLite), so it is recovered at once instead of after its lease.
   * @default false
   */
  orphanedAtStartup?: boolean;
  /** How long `stop()` lets runs and heartbeat turns finish before aborting them. @default 5000 */
  stopGraceMs?: number;
}

/** Executes what the ingress recorded: agent runs and heartbeat turns. */
export interface Runtime {
  start(): Promise<void>;
  /** A run was queued. */
  notifyRunQueued(): void;
  /** A `now` wake (or a run with `wakeMode: now`) asks for a heartbeat of this agent. */
  requestHeartbeat(agentId: string): void;
  stop(): Promise<void>;
}

export function createRuntime(deps: RuntimeDeps, options: RuntimeOptions = {}): Runtime {
  const leaseMs = options.leaseMs ?? 30_000;
  const maxAttempts = options.maxAttempts ?? 3;
  const owner = `${process.pid}:${randomUUID()}`;
  const { config, log, clock } = deps;
  const everyMs = parseDurationMs(config.agents.defaults.heartbeat.every) ?? 0;
  const agentIds = config.agents.list.length > 0 ? config.agents.list.map((a) => a.id) : [resolveDefaultAgentId(config.agents)];
  const schedulers = new Map<string, HeartbeatScheduler>();
  const shutdown = new AbortController();

  const schedulerFor = (agentId: string): HeartbeatScheduler => {
    let s = schedulers.get(agentId);
    if (s === undefined) {
      s = createHeartbeatScheduler({
        everyMs,
        coalesceMs: options.coalesceMs ?? 250,
        runTurn: async (trigger) => {
          try {
            // Events beyond one turn's share wait for the next turn, which is asked for at once.
            if (await runHeartbeatTurn(deps, agentId, trigger, shutdown.signal)) schedulerFor(agentId).request();
          } catch (error) {
            log.error('heartbeat turn failed; its events stay pending', { agentId, err: error });
          }
        },
      });
      schedulers.set(agentId, s);
    }
    return s;
  };

  const runtime: Runtime = {
    async start() {
      await recover(options.orphanedAtStartup === true ? Number.MAX_SAFE_INTEGER : clock.now());
      recoveryTimer = setInterval(() => void recover(clock.now()), Math.max(1, Math.floor(leaseMs / 2)));
      recoveryTimer.unref();
      for (const id of agentIds) schedulerFor(id).start();
      pool.start();
      for (const id of agentIds) {
        if (await deps.store.hasPendingNowEvent(mainSessionKey(id))) runtime.requestHeartbeat(id);
      }
    },
    notifyRunQueued: () => pool.notify(),
    requestHeartbeat: (agentId) => schedulerFor(agentId).request(),
    async stop() {
      clearInterval(recoveryTimer);
      // A heartbeat cut short leaves its events pending; they are the next start's first turn.
      const abortTurns = setTimeout(() => shutdown.abort(new Error('shutting down')), options.stopGraceMs ?? 5000);
      await Promise.all([pool.stop(), ...[...schedulers.values()].map((s) => s.stop())]);
      clearTimeout(abortTurns);
    },
  };

  const pool = new RunWorkerPool({
    store: deps.store,
    log,
    now: clock.now,
    owner,
    leaseMs,
    pollMs: options.pollMs ?? 1000,
    maxConcurrentRuns: config.agents.defaults.maxConcurrentRuns,
    ...(options.stopGraceMs === undefined ? {} : { stopGraceMs: options.stopGraceMs }),
    execute: async (run: RunRecord, signal: AbortSignal) => {
      const result = await executeRun(deps, run, owner, signal);
      if (result.recorded && run.wakeMode === 'now') runtime.requestHeartbeat(run.agentId);
    },
  });

  let recoveryTimer: NodeJS.Timeout | undefined;
  const recover = async (now: number): Promise<void> => {
    try {
      const r = await deps.store.recoverExpiredRuns(now, maxAttempts, (run) =>
        createRunSummary(deps, run, 'failed', 'interrupted', clock.now()));
      if (r.requeued.length + r.failed.length > 0) log.warn('recovered interrupted runs', { requeued: r.requeued, failed: r.failed });
      if (r.requeued.length > 0) pool.notify();
      for (const id of r.failed) {
        const run = await deps.store.getRun(id);
        if (run !== null && run.wakeMode === 'now') runtime.requestHeartbeat(run.agentId);
      }
    } catch (error) {
      log.error('run recovery failed', { err: error });
    }
  };

  return runtime;
}
