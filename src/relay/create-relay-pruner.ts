import type { Clock } from '../common/clock.js';
import type { Log } from '../common/log.js';
import { runNowAndEvery } from '../common/repeat-every.js';
import type { RelayPruneCounts, RelayQueue } from '../store/index.js';

interface RelayPrunerDeps {
  store: Pick<RelayQueue, 'pruneRelay'>;
  /** `relay.retention` in ms. */
  retentionMs: number;
  clock: Clock;
  log: Log;
  /** @default 60000 */
  everyMs?: number;
  /** Rows of each kind per batch (one commit each). @default 200 */
  batchSize?: number;
  /** Batches in one pass; the next pass goes on. @default 500 */
  maxBatches?: number;
  /** Sees each pass's totals (metrics). */
  onPruned?: (counts: RelayPruneCounts) => void;
}

interface RelayPruner {
  start(): void;
  stop(): Promise<void>;
  /** One pass now; resolves with its totals. */
  pruneNow(): Promise<RelayPruneCounts>;
}

/**
 * Keeps the relay's backlog bounded by its retention, a pass a minute in small batches: pending
 * requests and dead letters older than `relay.retention` are dropped (a request the home never
 * took is logged as a warning with the count: it is lost), acknowledged ones once their key's
 * window ended.
 */
export function createRelayPruner(deps: RelayPrunerDeps): RelayPruner {
  const { clock, log } = deps;
  const batchSize = deps.batchSize ?? 200;
  const halt = new AbortController();
  let running: Promise<void> = Promise.resolve();
  const pruneNow = async (): Promise<RelayPruneCounts> => {
    const total: RelayPruneCounts = { expired: 0, dead: 0, done: 0 };
    const now = clock.now();
    const cutoffs = { receivedBefore: now - deps.retentionMs, now };
    for (let i = 0; i < (deps.maxBatches ?? 500) && !halt.signal.aborted; i++) {
      const got = await deps.store.pruneRelay(cutoffs, batchSize);
      total.expired += got.expired;
      total.dead += got.dead;
      total.done += got.done;
      if (got.expired < batchSize && got.dead < batchSize && got.done < batchSize) break;
    }
    return total;
  };
  const pass = async (): Promise<void> => {
    try {
      const total = await pruneNow();
      deps.onPruned?.(total);
      if (total.expired > 0)
        log.warn('relay dropped requests no home acknowledged within relay.retention', { count: total.expired });
      if (total.dead > 0) log.info('relay dropped dead letters past relay.retention', { count: total.dead });
    } catch (error) {
      log.error('relay pruning failed', { err: error });
    }
  };
  return {
    start() {
      running = runNowAndEvery(clock, deps.everyMs ?? 60_000, halt.signal, pass);
    },
    async stop() {
      halt.abort();
      await running;
    },
    pruneNow,
  };
}
