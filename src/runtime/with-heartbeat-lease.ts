import { linkSignals } from '../common/link-signals.js';
import { repeatEvery } from '../common/repeat-every.js';
import type { RuntimeDeps } from './runtime-deps.js';
import type { HeartbeatLease } from './run-heartbeat-turn.js';

/**
 * Runs `turn` under the agent's heartbeat lease, renewed every third of `leaseMs` while it runs,
 * and released after. Resolves `undefined` without running it when another process holds the lease
 * (or, with `minIntervalMs`, gave the agent a turn that recently).
 * The lease's signal aborts at shutdown or when a renewal finds the lease lost.
 */
export async function withHeartbeatLease<T>(
  deps: Pick<RuntimeDeps, 'store' | 'clock' | 'log'>,
  o: { agentId: string; owner: string; leaseMs: number; shutdown: AbortSignal; minIntervalMs?: number },
  turn: (lease: HeartbeatLease) => Promise<T>,
): Promise<T | undefined> {
  const { store, clock, log } = deps;
  const claim = await store.claimHeartbeat({
    agentId: o.agentId,
    owner: o.owner,
    leaseMs: o.leaseMs,
    ...(o.minIntervalMs === undefined ? {} : { minIntervalMs: o.minIntervalMs }),
  });
  if (claim === null) return undefined;
  const lost = new AbortController();
  const done = new AbortController();
  const renewing = repeatEvery(clock, Math.max(1, Math.floor(o.leaseMs / 3)), done.signal, async () => {
    try {
      if (!(await store.renewHeartbeat(claim, o.leaseMs))) {
        lost.abort(new Error('heartbeat lease lost'));
        done.abort();
      }
    } catch (error) {
      log.error('renewing a heartbeat lease failed', { agentId: o.agentId, err: error });
    }
  });
  // Not AbortSignal.any: with the process-long shutdown signal as a source it keeps an entry per turn.
  const linked = linkSignals([o.shutdown, lost.signal]);
  try {
    return await turn({ claimId: claim.claimId, signal: linked.signal });
  } finally {
    linked.dispose();
    done.abort();
    await renewing;
    await store
      .releaseHeartbeat(claim)
      .catch((error: unknown) => log.error('releasing a heartbeat lease failed', { agentId: o.agentId, err: error }));
  }
}
