import type { Clock } from '../common/clock.js';
import { createWakeup } from '../common/create-wakeup.js';
import type { Ids } from '../common/ids.js';
import type { Log } from '../common/log.js';
import { parseDurationMs } from '../common/parse-duration.js';
import type { RelayConfig } from '../config/index.js';
import type { CompiledMapping } from '../hooks/index.js';
import type { RelayDoor, RelayRouteCall } from '../http/index.js';
import type { RelayPruneCounts, RelayQueue } from '../store/index.js';
import { createRelayApi, type RelayApiObserver } from './create-relay-api.js';
import { createRelayDoor } from './create-relay-door.js';
import { createRelayPruner } from './create-relay-pruner.js';

/** What a relay reports (metrics). */
interface RelayObserver extends RelayApiObserver {
  pruned(counts: RelayPruneCounts): void;
}

/** A relay's parts: its door (rebuilt with the ingress on reload), its pull API, its retention. */
export interface Relay {
  /** The door for the mappings in force. */
  door(mappings: readonly CompiledMapping[], idempotencyWindowSeconds: number): RelayDoor;
  /** The pull API's core, behind `/relay/lease` and `/relay/ack`. */
  handle(call: RelayRouteCall): Promise<{ status: number; body: string }>;
  start(): void;
  /** Ends the waiting leases (answered at once) and the pruner. */
  stop(): Promise<void>;
}

interface RelayDeps {
  config: RelayConfig;
  store: RelayQueue;
  clock: Clock;
  ids: Ids;
  log: Log;
  observer?: RelayObserver;
  /** How often a waiting lease looks at the store unannounced (tests). @default 1000 */
  recheckMs?: number;
}

/** Builds a relay for a config with `relay.enabled`: one wakeup joins its door to its waiting leases. */
export function createRelay(deps: RelayDeps): Relay {
  const { config, store, clock, ids, log, observer } = deps;
  const wakeup = createWakeup(clock);
  const api = createRelayApi({
    store,
    config,
    wakeup,
    clock,
    ids,
    ...(deps.recheckMs === undefined ? {} : { recheckMs: deps.recheckMs }),
    ...(observer === undefined ? {} : { observer }),
  });
  const pruner = createRelayPruner({
    store,
    retentionMs: parseDurationMs(config.retention) ?? 0,
    clock,
    log,
    ...(observer === undefined ? {} : { onPruned: (c: RelayPruneCounts) => observer.pruned(c) }),
  });
  return {
    door: (mappings, idempotencyWindowSeconds) =>
      createRelayDoor({ store, mappings, clock, ids, idempotencyWindowSeconds, onRelayed: () => wakeup.notify() }),
    handle: (call) => api.handle(call),
    start: () => pruner.start(),
    async stop() {
      api.close();
      await pruner.stop();
    },
  };
}
