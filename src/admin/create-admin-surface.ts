import type { AuthLimiter } from '../auth/index.js';
import type { Clock } from '../common/clock.js';
import type { Ids } from '../common/ids.js';
import type { Log } from '../common/log.js';
import type { Scrub } from '../common/scrub-secrets.js';
import type { Config } from '../config/index.js';
import type { HookHandler } from '../hooks/index.js';
import type { RequestHandler, RequestObserver } from '../http/index.js';
import type { Store } from '../store/index.js';
import { createAdminApi } from './create-admin-api.js';
import { createAdminHandler } from './create-admin-handler.js';
import { createRequestRecorder } from './create-request-recorder.js';
import { readAdminAssets, type AdminAsset } from './read-admin-assets.js';
import type { DispatchAdminDeps } from './dispatch-routes.js';
import type { RelayAdminDeps } from './relay-routes.js';

interface AdminSurfaceDeps {
  config: Config;
  store: Store;
  /** The current hook handler (a reload replaces it). */
  handleHook: HookHandler;
  /** The current `hooks.path`. */
  hooksPath: () => string;
  limiter: AuthLimiter;
  clientAddress: (socketAddress: string | undefined, forwardedFor: string | string[] | undefined) => string;
  clock: Clock;
  ids: Ids;
  log: Log;
  /** Where the dashboard's files are. */
  assetsDir: string;
  /** A refusal's record was not kept (metrics); see `REFUSALS_PER_SECOND`. */
  onRecordDropped?: () => void;
  /** Pause, resume and drain through the API. */
  dispatch?: DispatchAdminDeps;
  /** A relay's queue, or a home's pull, through the API. */
  relay?: RelayAdminDeps;
  /** Applied to every reason a request record stores. */
  scrub: Scrub;
}

/** How often a failure to write request records is logged while it lasts. */
const RECORD_ERROR_LOG_INTERVAL_MS = 10_000;

/** Wires the request log, the admin API and the dashboard: what the request handler takes as `observer` and `admin`. */
export function createAdminSurface(deps: AdminSurfaceDeps): { observer: RequestObserver; admin: RequestHandler } {
  const { config, log, clock } = deps;
  let assets: Map<string, AdminAsset> | null = null;
  try {
    assets = readAdminAssets(deps.assetsDir);
  } catch (error) {
    log.warn('dashboard files missing; /admin serves the API only', {
      dir: deps.assetsDir,
      error: (error as Error).message,
    });
  }
  let lastErrorAt = Number.NEGATIVE_INFINITY;
  const observer = createRequestRecorder({
    store: deps.store,
    recordPayloads: config.gateway.recordPayloads,
    clock,
    ids: deps.ids,
    scrub: deps.scrub,
    ...(deps.onRecordDropped === undefined ? {} : { onDropped: deps.onRecordDropped }),
    onError(error) {
      if (clock.now() - lastErrorAt < RECORD_ERROR_LOG_INTERVAL_MS) return;
      lastErrorAt = clock.now();
      log.warn('request record not written', { error: (error as Error).message });
    },
  });
  const api = createAdminApi({
    store: deps.store,
    handleHook: deps.handleHook,
    hooksPath: deps.hooksPath,
    clock,
    ids: deps.ids,
    publishRuns: config.mcp.enabled,
    ...(deps.dispatch === undefined ? {} : { dispatch: deps.dispatch }),
    ...(deps.relay === undefined ? {} : { relay: deps.relay }),
    recorder: observer,
  });
  const admin = createAdminHandler({
    api,
    token: config.gateway.auth.token,
    limiter: deps.limiter,
    clientAddress: deps.clientAddress,
    clock,
    log,
    assets,
  });
  return { observer, admin };
}
