import type { Clock } from '../common/clock.js';
import type { Log } from '../common/log.js';
import { parseDurationMs } from '../common/parse-duration.js';
import { runNowAndEvery } from '../common/repeat-every.js';
import type { RetentionConfig } from '../config/index.js';
import type { RetentionStore } from './store.js';
import type { PruneCounts, PruneCutoffs } from './maintenance-types.js';

interface Pruner {
  /** Prunes in the background: a pass now, then one `everyMs` after each pass ends, never two at once. */
  start(): void;
  /** Stops, after the batch in flight. */
  stop(): Promise<void>;
  /** Deletes everything past its window now, batch by batch; resolves with the totals. */
  pruneAll(): Promise<PruneCounts>;
}

/** Sees what the pruner does (metrics). */
export interface PruneObserver {
  /** One batch's deleted rows, by kind. */
  pruned(counts: PruneCounts): void;
  /** A background pass ended: `ok` false when a batch failed (the next pass starts over). */
  passEnded(ok: boolean): void;
}

const KINDS = [
  'events',
  'runs',
  'deliveries',
  'transcript',
  'requests',
  'eventLog',
  'idempotencyKeys',
  'sessions',
] as const;
/** Bounds one pass, so a huge backlog is worked off over several passes. */
const MAX_BATCHES = 2000;

/** The cut-offs for `now`: each kind's window back from it. */
export function pruneCutoffs(retention: RetentionConfig, now: number): PruneCutoffs {
  const ms = (v: string): number => parseDurationMs(v) ?? 0;
  return {
    events: now - ms(retention.events),
    runs: now - ms(retention.runs),
    deliveries: now - ms(retention.deliveries),
    transcript: now - ms(retention.transcript),
    requests: now - ms(retention.requests),
    eventLog: now - ms(retention.eventLog),
  };
}

/**
 * The background pruner: small batches (one transaction each) so the ingress never waits behind a
 * long delete, and the database stays bounded under constant load (SQLite reuses the freed pages;
 * PostgreSQL's autovacuum does). On SQLite a batch rides the group commit with the requests of its
 * moment, which wait for it: a background pass takes `backgroundBatchSize` rows and pauses
 * `pauseMs` between batches, so working off a backlog takes a small share of the writer's time
 * (about a millisecond in ten) instead of every commit until it is done.
 */
export function createPruner(deps: {
  store: RetentionStore;
  retention: RetentionConfig;
  clock: Clock;
  log: Log;
  /** @default 60000 */
  everyMs?: number;
  /** Rows per kind per batch of `pruneAll`. @default 500 */
  batchSize?: number;
  /** Rows per kind per batch of a background pass. @default 100 */
  backgroundBatchSize?: number;
  /** Pause between the batches of a background pass, ms. @default 10 */
  pauseMs?: number;
  observer?: PruneObserver;
  /** Batches in one pass (tests). @default MAX_BATCHES */
  maxBatches?: number;
}): Pruner {
  const { store, clock, log } = deps;
  const halt = new AbortController();

  /** One pass of at most `maxBatches` batches; `more` when it stopped there with rows still due. */
  const prune = async (batchSize: number, pauseMs: number): Promise<{ total: PruneCounts; more: boolean }> => {
    const cutoffs = pruneCutoffs(deps.retention, clock.now());
    const total: PruneCounts = {
      events: 0,
      runs: 0,
      deliveries: 0,
      transcript: 0,
      requests: 0,
      eventLog: 0,
      idempotencyKeys: 0,
      sessions: 0,
    };
    for (let i = 0; i < (deps.maxBatches ?? MAX_BATCHES) && !halt.signal.aborted; i++) {
      const got = await store.prune(cutoffs, batchSize);
      deps.observer?.pruned(got);
      for (const k of KINDS) total[k] += got[k];
      if (KINDS.every((k) => got[k] < batchSize)) return { total, more: false };
      if (pauseMs === 0) await new Promise<void>((resolve) => setImmediate(resolve));
      else await clock.sleep(pauseMs, halt.signal).catch(() => undefined);
    }
    return { total, more: !halt.signal.aborted };
  };
  /**
   * Passes one after another until one ends with nothing left due: a pass cut short with rows still
   * due is followed by the next at once, so a backlog is worked off at the batches' own pace however
   * large. `onPass` sees each pass's totals.
   */
  const pruneUntilDone = async (
    batchSize: number,
    pauseMs: number,
    onPass: (total: PruneCounts) => void,
  ): Promise<void> => {
    for (let more = true; more; ) {
      const pass = await prune(batchSize, pauseMs);
      onPass(pass.total);
      more = pass.more;
    }
  };
  const pruneAll = async (): Promise<PruneCounts> => {
    const all: PruneCounts = {
      events: 0,
      runs: 0,
      deliveries: 0,
      transcript: 0,
      requests: 0,
      eventLog: 0,
      idempotencyKeys: 0,
      sessions: 0,
    };
    await pruneUntilDone(deps.batchSize ?? 500, 0, (total) => {
      for (const k of KINDS) all[k] += total[k];
    });
    return all;
  };

  const pass = async (): Promise<void> => {
    try {
      await pruneUntilDone(deps.backgroundBatchSize ?? 100, deps.pauseMs ?? 10, (total) => {
        if (KINDS.some((k) => total[k] > 0)) log.info('pruned finished work past its retention', { ...total });
      });
      deps.observer?.passEnded(true);
    } catch (error) {
      log.error('pruning failed', { err: error });
      deps.observer?.passEnded(false);
    }
  };
  /** The background loop; settles once stopped, after the batch in flight. */
  let running: Promise<void> = Promise.resolve();

  return {
    start() {
      // One loop, so a pass that outlasts `everyMs` (a backlog at start) is never joined by another.
      running = runNowAndEvery(clock, deps.everyMs ?? 60_000, halt.signal, pass);
    },
    async stop() {
      halt.abort();
      await running;
    },
    pruneAll,
  };
}
