#!/usr/bin/env node
/**
 * Composition root: the one place that wires config, store, policy, hooks, auth and HTTP together,
 * and the `hookgate` command's entry point.
 */
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import {
  createAuthLimiter,
  createSharedAuthLimiter,
  createSignatureGate,
  createTokenVerifier,
  groupAuthLimiter,
  type SharedAuthLimiter,
} from './auth/index.js';
import { createAdminSurface } from './admin/index.js';
import { catchUpTargets, createCatchUp, type CatchUp, type CatchUpReport } from './catch-up/index.js';
import { runCli } from './cli/index.js';
import { systemClock, type Clock } from './common/clock.js';
import { RequestError } from './common/errors.js';
import { createIds, type Ids } from './common/ids.js';
import { createLog, type Log } from './common/log.js';
import { createSecretScrubber, type Scrub } from './common/scrub-secrets.js';
import { CHANNEL_NAMES, listConfigSecrets, restartOnlyChanges, type LoadedConfig } from './config/index.js';
import { compileMappings, createHookHandler, createTransformRunner } from './hooks/index.js';
import {
  addressGroup,
  createAccessLog,
  createClientAddressResolver,
  createHttpServer,
  createPeerGrouper,
  createMcpRoute,
  createMetricsRoute,
  createReadinessRoute,
  createRelayRoute,
  createRequestHandler,
  type IngressSettings,
  type RequestHandler,
} from './http/index.js';
import {
  createHookLabeler,
  createMetrics,
  createPullMetrics,
  createReadiness,
  createRelayMetrics,
  observeAuthLimiter,
  observeModelRegistry,
  observeStore,
  type ReadinessDeps,
} from './ops/index.js';
import { createPolicy, readRunBudgets, resolveDefaultAgentId } from './policy/index.js';
import {
  createChannelAdapters,
  DeliveryWorker,
  type DeliveryPort,
  type DeliveryWorkerOptions,
} from './delivery/index.js';
import {
  abortableSleep,
  createDispatchWatch,
  createModelRegistry,
  createRuntime,
  waitForRun,
  type DispatchWatch,
  type Runtime,
  type RuntimeOptions,
} from './runtime/index.js';
import { createPruner, createStore, type Store, type StoreMode, type StoreObserver } from './store/index.js';
import { createMcpEvents, type McpEvents } from './outputs/mcp-events/index.js';
import { createHomePull, createRelay, type Puller, type Relay } from './relay/index.js';
import { readVersion } from './cli/read-version.js';

/** The dashboard's files, copied beside the compiled code and the bundle by the build. */
const ADMIN_ASSETS_DIR = fileURLToPath(new URL('./admin/static/', import.meta.url));

/** A running gateway. */
export interface Gateway {
  /** The port actually bound (differs from the config when it asked for 0). */
  port: number;
  store: Store;
  runtime: Runtime;
  /** Catching up after downtime (a pass runs at start; `runNow` for another). */
  catchUp: CatchUp;
  /**
   * Applies a new, already checked config to what can change while running (hooks, mappings,
   * tokens, channels); returns the changed keys that need a restart to take effect.
   */
  reload(next: LoadedConfig): string[];
  /** Stops accepting, finishes in-flight requests, flushes and closes the store. */
  close(): Promise<void>;
}

export interface GatewayDeps {
  log?: Log;
  clock?: Clock;
  ids?: Ids;
  /** Overrides `gateway.port` (tests use 0). */
  port?: number;
  /** Replaces the delivery port (the default sends through the configured channels). */
  delivery?: DeliveryPort;
  /** Delivery tuning (tests shorten backoff and polling). */
  deliveryOptions?: Partial<
    Pick<DeliveryWorkerOptions, 'maxAttempts' | 'maxAgeMs' | 'backoffBaseMs' | 'backoffMaxMs' | 'pollMs' | 'timeoutMs'>
  >;
  /** Runtime tuning (tests shorten leases and windows). */
  runtime?: RuntimeOptions;
  /** Readiness probe tuning (tests turn the cache off). */
  readiness?: Pick<ReadinessDeps, 'cacheMs' | 'timeoutMs'>;
  /** Relay tuning (tests shorten how often a waiting lease looks at the store). */
  relay?: { recheckMs?: number };
  /** MCP Events tuning (tests resolve callback names, shorten the sender's waits). */
  mcp?: Pick<Parameters<typeof createMcpEvents>[0], 'lookup' | 'send' | 'pollMs' | 'pageSize' | 'minTtlMs'>;
}

/** Opens the store for a config: `serve` for the gateway, `read`/`write` for CLI commands beside it. */
export function openStore(
  loaded: LoadedConfig,
  options: { mode: StoreMode; observer?: StoreObserver },
): Promise<Store> {
  return createStore(loaded.config.store, options);
}

/** Starts the gateway for a validated config. */
export async function startGateway(loaded: LoadedConfig, deps: GatewayDeps = {}): Promise<Gateway> {
  const { config } = loaded;
  // Follows reloads: a secret added to the config is scrubbed from then on, and one removed still is.
  const secrets = new Set([...listConfigSecrets(config), ...loaded.catchUpTokens.values()]);
  let scrubCurrent = createSecretScrubber([...secrets]);
  const scrub: Scrub = (text) => scrubCurrent(text);
  const log = deps.log ?? createLog({ level: config.gateway.logLevel, scrub });
  const clock = deps.clock ?? systemClock;
  const ids = deps.ids ?? createIds(clock.now);
  for (const w of loaded.warnings) log.warn('config warning', { path: w.path, warning: w.message });
  // Metrics before the store, which reports its commits to them; queue depths are read at scrape time.
  const metrics = createMetrics({
    now: clock.now,
    sample: async () => ({ queues: await store.readQueueStats(), size: await store.readStoreSize() }),
    // Read at scrape time, once the server below exists.
    openConnections: () => http.openConnections(),
    dispatch: () => ({ holds: dispatch.holds(), draining: dispatch.draining() }),
    onSampleError: (err) => log.warn('reading queue depths for /metrics failed', { err }),
  });
  // The store first: a second gateway on the same SQLite database is refused here, before it
  // touches anything.
  const store = observeStore(await openStore(loaded, { mode: 'serve', observer: metrics.store }), metrics, clock.now);
  let ready = false;
  // A relay holds each request for a home gateway and runs no agents: no runtime, deliveries or catch-up start.
  const relay: Relay | undefined = config.relay.enabled
    ? createRelay({
        config: config.relay,
        store,
        clock,
        ids,
        log,
        observer: createRelayMetrics(metrics.registry, {
          backlog: () => store.readRelayBacklog(),
          now: clock.now,
          onSampleError: (err) => log.warn('reading the relay backlog for /metrics failed', { err }),
        }),
        ...deps.relay,
      })
    : undefined;
  // Holds are read by every claim in the store; this copy serves readiness, metrics and the admin
  // API, and restarts the work a lifted hold had refused.
  const dispatch = createDispatchWatch({
    store,
    clock,
    log,
    onRead: (holds, lifted) => {
      runtime.resumeHeld(holds, lifted);
      if (lifted) deliveryWorker?.notify();
    },
  });
  // Swapped in place on reload: the delivery worker reads them on every delivery.
  const channels = { ...config.channels };
  const replyGuard = { allowedLinkHosts: config.delivery.allowedLinkHosts };
  const adapters = createChannelAdapters(config.channels, { now: clock.now });

  const deliveryWorker =
    deps.delivery === undefined
      ? new DeliveryWorker({
          store,
          log,
          clock,
          random: Math.random,
          channels,
          adapters,
          guard: replyGuard,
          owner: `${process.pid}:${ids.next()}`,
          leaseMs: config.store.leaseSeconds * 1000,
          scrub,
          held: () => dispatch.draining(),
          ...deps.deliveryOptions,
        })
      : undefined;
  // Rebuilt on reload: a provider added to `models` serves the next run (agents stay as started).
  let models = createModelRegistry(config, clock.now);
  const runtime = createRuntime(
    {
      config,
      configDir: loaded.dir,
      store,
      models: observeModelRegistry({ resolve: (ref) => models.resolve(ref) }, metrics),
      delivery: deps.delivery ?? deliveryWorker!,
      log,
      clock,
      ids,
      retry: { now: clock.now, sleep: abortableSleep, random: Math.random },
      scrub,
      publishRuns: config.mcp.enabled,
    },
    {
      leaseMs: config.store.leaseSeconds * 1000,
      budgets: readRunBudgets(() => current.config),
      draining: () => dispatch.draining(),
      ...deps.runtime,
    },
  );
  const runTransform = createTransformRunner(loaded.transformsDir, {
    maxProcesses: config.hooks.maxTransformProcesses,
    // A transform given a secret (`transform.env`) cannot put it into a prompt or the store.
    scrub,
  });
  const pruner = createPruner({ store, retention: config.store.retention, clock, log, observer: metrics.pruner });
  // Replicas sharing a store share the lockout too, so spreading attempts over them gains nothing.
  const localLimiter = createAuthLimiter(config.hooks.authRateLimit);
  const sharedLimiter: SharedAuthLimiter | undefined = store.shared
    ? createSharedAuthLimiter({ local: localLimiter, store, options: config.hooks.authRateLimit, clock, log })
    : undefined;
  /** The ids of the mappings in force, for `events/list`. */
  let mappingIds: readonly string[] = [];
  const buildIngress = (l: LoadedConfig): IngressSettings => {
    const mappings = compileMappings(l.config.hooks, loaded.transformsDir);
    mappingIds = mappings.map((m) => m.id);
    return {
      hooks: l.config.hooks,
      bodyTimeoutMs: config.gateway.bodyTimeoutMs,
      verifyToken: createTokenVerifier(l.config.hooks.token ?? ''),
      signatures: createSignatureGate(l.config.hooks.mappings),
      waitForRun: (runId, timeoutMs, signal) => waitForRun({ store, clock }, runId, timeoutMs, signal),
      handleHook: createHookHandler({
        // Agents as the runtime has them (read at startup): a reload that adds an agent or a model to
        // an allow-list must not let the ingress accept runs the runtime cannot make until a restart.
        // Providers (`models`) are rebuilt with each reload, so the ingress follows them.
        policy: createPolicy({ config: { ...l.config, agents: config.agents }, ids, clock }),
        store,
        clock,
        mappings,
        runTransform,
        idempotencyWindowSeconds: l.config.hooks.idempotencyWindowSeconds,
        maxWaitSeconds: l.config.hooks.maxWaitSeconds,
        // MCP is restart-only: the log is written from the start's config on.
        ...(config.mcp.enabled ? { publish: { ids } } : {}),
      }),
      ...(relay === undefined ? {} : { relay: relay.door(mappings, l.config.hooks.idempotencyWindowSeconds) }),
    };
  };
  let ingress = buildIngress(loaded);
  let current = loaded;
  // Failures and lockouts count by address group: an IPv6 sender's whole /64 is one client.
  const limiter = observeAuthLimiter(groupAuthLimiter(sharedLimiter ?? localLimiter, addressGroup), metrics);
  const clientAddress = createClientAddressResolver(config.gateway.trustedProxies);
  const hookLabel = createHookLabeler(() => ingress.hooks);
  const mcp: McpEvents | undefined = config.mcp.enabled
    ? createMcpEvents({
        config: config.mcp,
        store,
        mappingIds: () => mappingIds,
        clock,
        log,
        owner: `${process.pid}:${ids.next()}`,
        leaseMs: config.store.leaseSeconds * 1000,
        version: readVersion(),
        observer: metrics.mcpSender,
        ...deps.mcp,
      })
    : undefined;
  const readiness = createReadiness({
    probeWrite: () => store.probeWrite(),
    isStarted: () => ready,
    loops: [
      ...(relay === undefined ? [{ name: 'runs', isAlive: () => runtime.isAlive() }] : []),
      ...(deliveryWorker === undefined || relay !== undefined
        ? []
        : [{ name: 'deliveries', isAlive: () => deliveryWorker.isAlive() }]),
      ...(mcp === undefined ? [] : [{ name: 'subscriptions', isAlive: () => mcp.sender.isAlive() }]),
    ],
    clock,
    detail: () => ({
      dispatch: describeDispatch(dispatch),
      ...(puller === undefined ? {} : { pull: describePull(puller) }),
    }),
    ...deps.readiness,
  });
  const access = createAccessLog(log, { settings: () => current.config.logging, now: clock.now });
  const surface = createAdminSurface({
    config,
    store,
    limiter,
    clientAddress,
    clock,
    ids,
    log,
    assetsDir: ADMIN_ASSETS_DIR,
    onRecordDropped: metrics.requestRecordDropped,
    scrub,
    handleHook: relay === undefined ? (call, through) => ingress.handleHook(call, through) : refuseOnRelay,
    ...(relay !== undefined
      ? { relay: { role: 'relay' as const, store } }
      : config.pull === undefined
        ? {}
        : { relay: { role: 'home' as const, url: config.pull.url, status: () => ({ ...puller?.status() }) } }),
    hooksPath: () => ingress.hooks.path,
    dispatch: {
      store,
      watch: dispatch,
      replicaInFlight: () => ({ ...runtime.inFlight(), deliveries: deliveryWorker?.active() ?? 0 }),
      known: () => ({
        agents: agentIds(config),
        mappings: compileMappings(current.config.hooks, loaded.transformsDir).map((m) => m.id),
      }),
      clock,
    },
  });
  const catchUp = createCatchUp({
    store,
    handleHook: (call, through) => ingress.handleHook(call, through),
    hooksPath: () => ingress.hooks.path,
    observer: surface.observer,
    horizonMs: () => current.config.hooks.idempotencyWindowSeconds * 1000,
    clock,
    log,
    owner: `${process.pid}:${ids.next()}`,
    targets: () => catchUpTargets(current),
    onReport: (r) => {
      metrics.catchUpPass(r);
      logCatchUp(log, r);
    },
  });
  const puller: Puller | undefined =
    config.pull === undefined
      ? undefined
      : createHomePull({
          config: config.pull,
          settings: () => ingress,
          observer: surface.observer,
          clock,
          log,
          random: Math.random,
          metrics: createPullMetrics(metrics.registry),
        });
  const handler = createRequestHandler({
    settings: () => ingress,
    limiter,
    clientAddress,
    clock,
    log,
    access,
    isReady: () => ready,
    ...surface,
    routes: new Map([
      ...(mcp === undefined
        ? []
        : [
            [
              config.mcp.path,
              createMcpRoute({
                handle: (call) => mcp.handle(call),
                token: config.mcp.token ?? '',
                limiter,
                clientAddress,
                clock,
                log,
                bodyTimeoutMs: config.gateway.bodyTimeoutMs,
              }),
            ] as const,
          ]),
      ...relayRoutes(relay, {
        limiter,
        clientAddress,
        clock,
        log,
        token: config.relay.token ?? '',
        bodyTimeoutMs: config.gateway.bodyTimeoutMs,
      }),
      ['/readyz', createReadinessRoute(readiness)],
      [
        '/metrics',
        createMetricsRoute({
          render: metrics.render,
          contentType: metrics.contentType,
          token: config.gateway.auth.token,
          public: config.gateway.metrics.public,
          limiter,
          clientAddress,
          clock,
          log,
        }),
      ],
    ]),
    onAnswered: (hook, status) => metrics.recordRequest(hookLabel(hook), status),
  });
  const http = createHttpServer(handler, {
    bodyTimeoutMs: config.gateway.bodyTimeoutMs,
    maxConnections: config.gateway.maxConnections,
    maxConnectionsPerClient: config.gateway.maxConnectionsPerClient,
    peerGroup: createPeerGrouper(config.gateway.trustedProxies),
    onTurnedAway: (reason) => metrics.connectionTurnedAway(reason),
    onClosedForNewer: () => metrics.connectionClosedForNewer(),
    firstByteTimeoutMs: config.gateway.firstByteTimeoutMs,
    log,
    now: clock.now,
  });
  let port: number;
  let unsubscribe = (): void => undefined;
  try {
    // The port before recovery: a gateway that cannot serve gives up before it resumes any work.
    // Hooks are answered 503 until the runtime is up.
    port = await http.listen(deps.port ?? config.gateway.port, config.gateway.bind);
    await sharedLimiter?.start();
    await dispatch.start();
    pruner.start();
    if (relay === undefined) {
      await runtime.start();
      mcp?.sender.start();
      catchUp.start();
      deliveryWorker?.start();
    } else relay.start();
    // After the runtime: what the home pulls is taken like what its door receives.
    puller?.start();
    unsubscribe = store.subscribe((signal) => {
      if (signal.kind === 'deliveries') deliveryWorker?.notify();
      else if (signal.kind === 'holds') void dispatch.refresh();
    });
  } catch (error) {
    unsubscribe();
    await puller?.stop();
    await relay?.stop();
    await catchUp.stop();
    dispatch.stop();
    sharedLimiter?.stop();
    await mcp?.sender.stop();
    mcp?.close();
    await pruner.stop();
    await http.close();
    await deliveryWorker?.stop();
    await runtime.stop();
    await store.close();
    throw error;
  }
  ready = true;
  log.info('gateway listening', {
    url: `http://${config.gateway.bind.includes(':') ? `[${config.gateway.bind}]` : config.gateway.bind}:${port}`,
    hooksPath: config.hooks.enabled ? config.hooks.path : null,
    mcpPath: config.mcp.enabled ? config.mcp.path : null,
    ...(relay === undefined ? {} : { relay: true }),
    ...(config.pull === undefined ? {} : { pullFrom: config.pull.url }),
    store: config.store.driver,
  });

  let closing: Promise<void> | undefined;
  return {
    port,
    store,
    runtime,
    catchUp,
    reload(next) {
      const restart = restartOnlyChanges(current.config, next.config);
      if (next.transformsDir !== loaded.transformsDir) restart.push('hooks.transformsDir');
      models = createModelRegistry({ ...next.config, agents: config.agents }, clock.now);
      ingress = buildIngress(next);
      for (const name of CHANNEL_NAMES) {
        if (next.config.channels[name] === undefined) delete channels[name];
        else Object.assign(channels, { [name]: next.config.channels[name] });
      }
      replyGuard.allowedLinkHosts = next.config.delivery.allowedLinkHosts;
      adapters.clear();
      for (const [name, adapter] of createChannelAdapters(next.config.channels, { now: clock.now }))
        adapters.set(name, adapter);
      const before = secrets.size;
      for (const secret of listConfigSecrets(next.config)) secrets.add(secret);
      if (secrets.size !== before) scrubCurrent = createSecretScrubber([...secrets]);
      current = next;
      return restart;
    },
    close() {
      closing ??= (async () => {
        ready = false;
        unsubscribe();
        // The batch in hand is finished and acknowledged while the door and the store still work.
        await puller?.stop();
        // Waiting leases are answered at once, so the listener closes without waiting them out.
        await relay?.stop();
        await catchUp.stop();
        dispatch.stop();
        sharedLimiter?.stop();
        // No delivery is claimed from here on: one claimed now, while requests and runs finish,
        // might still be in flight at exit and go out again after the restart. The sends in flight
        // finish (each within its channel's timeout) and are recorded before the store closes;
        // deliveries the last runs make wait, pending, for the next start.
        const deliveriesStopped = deliveryWorker?.stop();
        await pruner.stop();
        await http.close();
        access.flush();
        await mcp?.sender.stop();
        mcp?.close();
        await runtime.stop();
        await deliveriesStopped;
        await runTransform.close();
        await store.close();
        log.info('gateway stopped');
      })();
      return closing;
    },
  };
}

/**
 * What `/readyz` says of the dispatch holds (their scopes and keys, never an operator's note: the
 * route answers without a token): whether this replica or the fleet drains, and what is paused.
 */
function describeDispatch(w: DispatchWatch): Record<string, unknown> {
  const holds = w.holds();
  return {
    held: holds.length > 0 || w.draining(),
    draining: { replica: w.draining(), fleet: holds.some((h) => h.kind === 'drain') },
    paused: holds.filter((h) => h.kind === 'pause').map((h) => ({ scope: h.scope, key: h.key })),
  };
}

/** A relay builds no actions: a replay is for its home, where the request went. */
const refuseOnRelay = (): Promise<never> => Promise.reject(new RequestError('not_on_relay'));

/** The pull API's two paths on a relay, behind the relay token. */
function relayRoutes(
  relay: Relay | undefined,
  guard: Omit<Parameters<typeof createRelayRoute>[0], 'handle'>,
): Array<readonly [string, RequestHandler]> {
  if (relay === undefined) return [];
  const route = createRelayRoute({ ...guard, handle: (call) => relay.handle(call) });
  return [
    ['/relay/lease', route],
    ['/relay/ack', route],
  ];
}

/**
 * What `/readyz` says of a home's pull: whether the relay answers (the door serves either way); never
 * the relay's address or the error (the route answers without a token).
 */
function describePull(p: Puller): Record<string, unknown> {
  const s = p.status();
  return {
    relayUp: s.relayUp,
    failingSince: s.failingSince === null ? null : new Date(s.failingSince).toISOString(),
  };
}

/** One line a catch-up pass: what it read and handled; a failure as a warning with its reason. */
function logCatchUp(log: Log, r: CatchUpReport): void {
  if (r.outcome === 'busy') return;
  const fields = {
    mappingId: r.mappingId,
    provider: r.provider,
    from: r.from === null ? null : new Date(r.from).toISOString(),
    listed: r.listed,
    missed: r.missed,
    accepted: r.accepted,
    skipped: r.skipped,
    refused: r.refused,
    duplicates: r.duplicates,
    redelivered: r.redelivered,
    truncated: r.truncated,
  };
  if (r.outcome === 'failed')
    log.warn('catch-up pass failed; the next one starts where it stopped', { ...fields, error: r.error });
  else if (r.missed > 0 || r.clamped) log.info('catch-up pass', { ...fields, clamped: r.clamped });
  else log.debug('catch-up pass', fields);
}

/** The agents a hold may name: the configured ones, or the default agent alone. */
function agentIds(config: LoadedConfig['config']): string[] {
  return config.agents.list.length > 0 ? config.agents.list.map((a) => a.id) : [resolveDefaultAgentId(config.agents)];
}

function isEntryPoint(): boolean {
  const entry = process.argv[1];
  if (entry === undefined) return false;
  try {
    return realpathSync(entry) === fileURLToPath(import.meta.url);
  } catch {
    return false;
  }
}

if (isEntryPoint()) {
  runCli(process.argv.slice(2), {
    env: process.env,
    stdout: (s) => process.stdout.write(s),
    stderr: (s) => process.stderr.write(s),
    startGateway,
    openStore,
  }).then(
    (code) => {
      if (code !== undefined) process.exitCode = code;
    },
    (error: unknown) => {
      process.stderr.write(`hookgate: ${(error as Error).stack ?? String(error)}\n`);
      process.exitCode = 1;
    },
  );
}
