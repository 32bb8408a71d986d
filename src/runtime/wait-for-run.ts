import type { Clock } from '../common/clock.js';
import type { RunState, StoreReader, WorkSignals } from '../store/index.js';

/** Where a run stands when a waiting client is answered. */
export interface RunWaitResult {
  runId: string;
  /** `queued` or `running` when the wait ran out first. */
  status: RunState;
  /** The reply reached its chat channel (every part accepted). */
  delivered: boolean;
  /** A category for what went wrong, never the model's text. */
  error: 'failed' | 'timed_out' | 'wait_timeout' | 'delivery_failed' | 'delivery_skipped' | null;
  reply: string | null;
  /** Why a run still `queued` when the wait ran out is held back (its budget), else `null`. */
  held: string | null;
}

const FINISHED: ReadonlySet<RunState> = new Set(['succeeded', 'failed', 'timed_out']);
/** Fallback poll while waiting, in case a signal is missed (another replica, a reconnect). */
const POLL_MS = 500;

/**
 * Waits up to `timeoutMs` for a run to end and, when it produced a delivery, for that delivery to
 * end too. Wakes on the store's `finished` signal and polls as a fallback; works whichever
 * process executes the run. Never cancels the run. `signal` (the waiting client went away) ends
 * the wait early, with the answer a wait that ran out gets.
 */
export async function waitForRun(
  deps: { store: Pick<StoreReader, 'getRun' | 'getRunDelivery'> & WorkSignals; clock: Clock },
  runId: string,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<RunWaitResult> {
  const { store, clock } = deps;
  const deadline = clock.now() + timeoutMs;
  let wake = new AbortController();
  const off = store.subscribe((s) => {
    if (s.kind === 'finished' && s.runId === runId) wake.abort();
  });
  const onGone = (): void => wake.abort();
  signal?.addEventListener('abort', onGone, { once: true });
  try {
    for (;;) {
      const result = await look(store, runId);
      if (result !== null) return result;
      const left = deadline - clock.now();
      if (left <= 0 || signal?.aborted === true) {
        const run = await store.getRun(runId);
        const held = run?.state === 'queued' ? run.heldReason : null;
        return { runId, status: run?.state ?? 'queued', delivered: false, error: 'wait_timeout', reply: null, held };
      }
      await clock.sleep(Math.min(left, POLL_MS), wake.signal).catch(() => undefined);
      if (wake.signal.aborted) wake = new AbortController();
    }
  } finally {
    off();
    signal?.removeEventListener('abort', onGone);
  }
}

/** The final result, or `null` while the run or its delivery is still under way. */
async function look(
  store: Pick<StoreReader, 'getRun' | 'getRunDelivery'>,
  runId: string,
): Promise<RunWaitResult | null> {
  const run = await store.getRun(runId);
  if (run === null || !FINISHED.has(run.state)) return null;
  if (run.state !== 'succeeded') {
    return {
      runId,
      status: run.state,
      delivered: false,
      error: run.state === 'timed_out' ? 'timed_out' : 'failed',
      reply: null,
      held: null,
    };
  }
  const delivery = run.deliver ? await store.getRunDelivery(runId) : null;
  if (delivery?.state === 'pending') return null;
  const error =
    delivery?.state === 'failed' ? 'delivery_failed' : delivery?.state === 'skipped' ? 'delivery_skipped' : null;
  return { runId, status: run.state, delivered: delivery?.state === 'sent', error, reply: run.reply, held: null };
}
