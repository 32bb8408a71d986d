import type { Clock } from '../common/clock.js';
import type { Ids } from '../common/ids.js';
import type { Log } from '../common/log.js';
import type { Scrub } from '../common/scrub-secrets.js';
import type { Config } from '../config/index.js';
import type { DeliveryPort } from '../delivery/index.js';
import type { Store } from '../store/index.js';
import type { ModelRegistry } from './create-model-registry.js';
import type { RetryDeps } from './providers/call-with-retry.js';

/** What runtime pieces share. */
export interface RuntimeDeps {
  config: Config;
  /** Directory of the config file: relative workspaces resolve against it. */
  configDir: string;
  store: Store;
  models: ModelRegistry;
  delivery: DeliveryPort;
  log: Log;
  clock: Clock;
  ids: Ids;
  retry: RetryDeps;
  /** Applied to a provider's error before it becomes a run's error (stored, summarised, delivered). @default keepText */
  scrub?: Scrub;
  /** A run's end publishes `run.finished` to the event log (`mcp.enabled`). @default false */
  publishRuns?: boolean;
}
