import { randomUUID } from 'node:crypto';
import { createClaimLoop } from '../common/create-claim-loop.js';
import { parseDurationMs } from '../common/parse-duration.js';
import { repeatEvery } from '../common/repeat-every.js';
import { mainSessionKey, resolveDefaultAgentId, resolveRunBudgets } from '../policy/index.js';
import { coveringHold, type ClaimedRun, type DispatchHold, type RunBudgets } from '../store/index.js';
import { createHeartbeatScheduler, type HeartbeatScheduler } from './create-heartbeat-scheduler.js';
import { executeRun, finishRun } from './execute-run.js';
import { runHeartbeatTurn } from './run-heartbeat-turn.js';
import type { RuntimeDeps } from './runtime-deps.js';
import { withHeartbeatLease } from './with-heartbeat-lease.js';

export interface RuntimeOptions {
  /** Lease on a claimed run or heartbeat turn; renewed every third of it while the work runs. @default 30000 */
  leaseMs?: number;
  /** How often to look for work nobody announced. @default 1000 */
  pollMs?: number;
  /** Window in which heartbeat requests share one turn. @default 250 */
  coalesceMs?: number;
  /** Claims of one run before an expired lease fails it as `interrupted`. @default 3 */
  maxAttempts?: number;
  /** How long `stop()` lets runs and heartbeat turns finish before aborting them. @default 5000 */
  stopGraceMs?: number;
  /** The run budgets in force, read at every claim (a reload may change them). @default from `config` at start */
  budgets?: () => RunBudgets | undefined;
  /** While it says true this replica claims no run and takes no heartbeat turn (it drains). @default never */
  draining?: () => boolean;
  /** The periodic heartbeat's period, below what the config allows (tests). @default agents.defaults.heartbeat.every */
  heartbeatEveryMs?: number;
}

/** What this process is working on now. */
interface RuntimeInFlight {
  runs: number;
  /** Heartbeat turns holding their agent's lease. */
  heartbeats: number;
}

/** Executes what the ingress recorded: agent runs and heartbeat turns. */
export interface Runtime {
  start(): Promise<void>;
  /** A run was queued. */
  notifyRunQueued(): void;
  /** A `now` wake (or a run with `wakeMode: now`) asks for a heartbeat of this agent. */
  requestHeartbeat(agentId: string): void;
  /** Whether the run loop is running and not stalled (readiness). */
  isAlive(): boolean;
  /**
   * The dispatch holds as just read (`lifted`: one was lifted, or this replica's drain ended): each
   * agent whose heartbeat turn a hold refused gets it once no hold covers it, and runs are looked
   * for at once after a lift.
   */
  resumeHeld(holds: readonly DispatchHold[], lifted: boolean): void;
  /** Runs and heartbeat turns in flight in this process. */
  inFlight(): RuntimeInFlight;
  stop(): Promise<void>;
}

export function createRuntime(deps: RuntimeDeps, options: RuntimeOptions = {}): Runtime {
  const leaseMs = options.leaseMs ?? 30_000;
  const maxAttempts = options.maxAttempts ?? 3;
  const stopGraceMs = options.stopGraceMs ?? 5000;
  const owner = `${process.pid}:${randomUUID()}`;
  const { config, log, clock, store } = deps;
  const everyMs = options.heartbeatEveryMs ?? parseDurationMs(config.agents.defaults.heartbeat.every) ?? 0;
  const floodPauseMs = parseDurationMs(config.agents.defaults.heartbeat.floodPause) ?? 0;
  const agentIds =
    config.agents.list.length > 0 ? config.agents.list.map((a) => a.id) : [resolveDefaultAgentId(config.agents)];
  const schedulers = new Map<string, HeartbeatScheduler>();
  const startBudgets = resolveRunBudgets(config);
  const readBudgets = options.budgets ?? ((): RunBudgets | undefined => startBudgets);
  const shutdown = new AbortController();
  const halt = new AbortController();
  const draining = options.draining ?? ((): boolean => false);
  let turnsInFlight = 0;
  /** Agents whose heartbeat turn a hold (or this replica's drain) refused: asked for again once free. */
  const refused = new Set<string>();

  /** Agents whose `now` wakes wait for the periodic heartbeat, their `tokensPerDay` spent. */
  const waiting = new Set<string>();
  /**
   * Whether an agent's requested turn waits: its `tokensPerDay` is spent (by runs and turns) and a
   * periodic heartbeat will take its events. Logged once as the agent starts waiting.
   */
  const overTokens = async (agentId: string): Promise<boolean> => {
    const limit = readBudgets()?.agents[agentId]?.tokensPerDay;
    // The store's own usage read, as claims count it (runs and turns of the last 24 h).
    const over =
      everyMs > 0 &&
      limit !== undefined &&
      (await store.readBudgetUsage({ agents: { [agentId]: { tokensPerDay: limit } }, hooks: {} })).agents[agentId]!
        .tokens >= limit;
    if (over && !waiting.has(agentId)) {
      log.warn('agent over its tokensPerDay: its now wakes wait for the periodic heartbeat', {
        agentId,
        tokensPerDay: limit,
      });
    }
    if (over) waiting.add(agentId);
    else waiting.delete(agentId);
    return over;
  };

  const schedulerFor = (agentId: string): HeartbeatScheduler => {
    let s = schedulers.get(agentId);
    if (s === undefined) {
      s = createHeartbeatScheduler({
        everyMs,
        coalesceMs: options.coalesceMs ?? 250,
        runTurn: async (ask) => {
          // A drained replica takes no turn; its events wait for another replica, or for resumeHeld.
          if (draining()) {
            refused.add(agentId);
            return undefined;
          }
          try {
            // A requested turn is paid for unless the agent's tokensPerDay is spent; a periodic one always runs.
            const paid = ask.request && !(await overTokens(agentId));
            if (!paid && !ask.periodic) return undefined;
            // Another process holding the agent's lease runs the turn (it hears the same signal). A
            // periodic tick (and a turn that is both) runs even with nothing pending; alone, it skips an
            // agent another replica gave a turn within half a period.
            const trigger = ask.periodic ? 'periodic' : 'request';
            const minIntervalMs = ask.periodic && !paid ? Math.floor(everyMs / 2) : undefined;
            const lease = {
              agentId,
              owner,
              leaseMs,
              shutdown: shutdown.signal,
              ...(minIntervalMs === undefined ? {} : { minIntervalMs }),
            };
            const outcome = await withHeartbeatLease(deps, lease, async (held) => {
              turnsInFlight++;
              try {
                return await runHeartbeatTurn(deps, agentId, trigger, held);
              } finally {
                turnsInFlight--;
              }
            });
            // Refused: another replica holds the lease (it runs the turn), or a hold covers the agent.
            if (outcome === undefined && coveringHold(await store.listHolds(), agentId) !== undefined)
              refused.add(agentId);
            // A digest that kept events pending: a `now` event among them gets the next turn, after the pause.
            if (outcome === 'kept' && (await store.hasPendingNowEvent(mainSessionKey(agentId)))) s!.request();
            // A flood goes on arriving: the next requested turn waits, and takes what came meanwhile at once.
            return outcome === 'digest' || outcome === 'kept' ? floodPauseMs : undefined;
          } catch (error) {
            log.error('heartbeat turn failed; its events stay pending', { agentId, err: error });
            // The scheduler asks for the turn again after a wait (a `now` wake must not wait for the next one).
            throw error;
          }
        },
      });
      schedulers.set(agentId, s);
    }
    return s;
  };

  const runs = createClaimLoop<ClaimedRun>({
    name: 'runs',
    claim: (limit) => {
      const budgets = readBudgets();
      return store.claimRuns({ owner, limit, leaseMs, ...(budgets === undefined ? {} : { budgets }) });
    },
    execute: async (run, signal, finishing) => {
      await executeRun(deps, run, signal, finishing);
    },
    renew: (claims) => store.renewRuns(claims, leaseMs),
    concurrency: config.agents.defaults.maxConcurrentRuns,
    held: draining,
    pollMs: options.pollMs ?? 1000,
    renewEveryMs: Math.max(1, Math.floor(leaseMs / 3)),
    stopGraceMs,
    clock,
    log,
  });

  const recover = async (): Promise<void> => {
    try {
      const r = await store.recoverExpiredRuns({ owner, maxAttempts, leaseMs });
      if (r.requeued.length + r.abandoned.length > 0) {
        log.warn('recovered interrupted runs', { requeued: r.requeued, failed: r.abandoned.map((run) => run.id) });
      }
      for (const run of r.abandoned) {
        await finishRun(deps, run, {
          state: 'failed',
          reply: null,
          error: 'interrupted',
          category: 'interrupted',
          modelUsed: null,
          content: '',
          started: clock.now(),
        });
      }
      for (const agentId of await store.recoverExpiredHeartbeats()) {
        log.warn('heartbeat lease expired with its turn unfinished; running it again', { agentId });
        schedulerFor(agentId).request();
      }
    } catch (error) {
      log.error('recovery failed', { err: error });
    }
  };

  /** Asks for a turn for each agent whose main session holds an event waiting for an immediate heartbeat. */
  const askPendingTurns = async (): Promise<void> => {
    for (const id of agentIds) {
      if (await store.hasPendingNowEvent(mainSessionKey(id))) runtime.requestHeartbeat(id);
    }
  };

  let unsubscribe = (): void => undefined;
  const runtime: Runtime = {
    async start() {
      unsubscribe = store.subscribe((signal) => {
        if (signal.kind === 'runs') runs.notify();
        else if (signal.kind === 'heartbeat' && schedulers.has(signal.agentId)) schedulerFor(signal.agentId).request();
      });
      await recover();
      void repeatEvery(clock, Math.max(1, Math.floor(leaseMs / 2)), halt.signal, recover);
      for (const id of agentIds) schedulerFor(id).start();
      runs.start();
      await askPendingTurns();
    },
    notifyRunQueued: () => runs.notify(),
    requestHeartbeat: (agentId) => schedulerFor(agentId).request(),
    isAlive: () => runs.isAlive(),
    resumeHeld(holds, lifted) {
      if (lifted) runs.notify();
      if (draining()) return;
      for (const agentId of refused) {
        if (coveringHold(holds, agentId) !== undefined) continue;
        refused.delete(agentId);
        runtime.requestHeartbeat(agentId);
      }
    },
    inFlight: () => ({ runs: runs.active(), heartbeats: turnsInFlight }),
    async stop() {
      unsubscribe();
      halt.abort();
      // A heartbeat cut short leaves its events pending; they are the next start's first turn.
      const graceOver = new AbortController();
      const abortTurns = clock.sleep(stopGraceMs, graceOver.signal).then(
        () => shutdown.abort(new Error('shutting down')),
        () => undefined,
      );
      await Promise.all([runs.stop(), ...[...schedulers.values()].map((s) => s.stop())]);
      graceOver.abort();
      await abortTurns;
    },
  };
  return runtime;
}
