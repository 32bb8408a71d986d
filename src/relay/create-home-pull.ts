import type { Clock } from '../common/clock.js';
import type { Log } from '../common/log.js';
import type { PullConfig } from '../config/index.js';
import type { IngressSettings, RequestObserver } from '../http/index.js';
import { createPuller, type PullObserver, type Puller } from './create-puller.js';
import { createRelayClient } from './create-relay-client.js';
import { passRelayedRequest } from './pass-relayed-request.js';

interface HomePullDeps {
  config: PullConfig;
  /** The ingress in force: this gateway's own door. */
  settings: () => IngressSettings;
  /** The request log. */
  observer?: RequestObserver | undefined;
  clock: Clock;
  log: Log;
  random: () => number;
  metrics?: PullObserver;
}

/** A home gateway's pull from its relay (`pull`), through this gateway's own door. */
export function createHomePull(deps: HomePullDeps): Puller {
  const { config, clock } = deps;
  const relayHost = new URL(config.url).host;
  return createPuller({
    client: createRelayClient({
      url: config.url,
      token: config.token,
      connectTimeoutMs: config.connectTimeoutSeconds * 1000,
      now: clock.now,
    }),
    pass: (r) => passRelayedRequest({ settings: deps.settings, observer: deps.observer, relayHost, now: clock.now }, r),
    clock,
    log: deps.log,
    random: deps.random,
    options: {
      waitSeconds: config.waitSeconds,
      batchSize: config.batchSize,
      concurrency: config.concurrency,
      retryMaxMs: config.retryMaxSeconds * 1000,
    },
    ...(deps.metrics === undefined ? {} : { observer: deps.metrics }),
  });
}
