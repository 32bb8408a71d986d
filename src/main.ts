#!/usr/bin/env node
/**
 * Composition root: the one place that wires config, store, policy, hooks, auth and HTTP together,
 * and the `hookgate` command's entry point.
 */
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createAuthLimiter, createTokenVerifier } from './auth/index.js';
import { runCli } from './cli/index.js';
import { systemClock, type Clock } from './common/clock.js';
import { createIds, type Ids } from './common/ids.js';
import { createLog, type Log } from './common/log.js';
import { createSecretScrubber } from './common/scrub-secrets.js';
import { listConfigSecrets, type LoadedConfig } from './config/index.js';
import { compileMappings, createHookHandler, createTransformRunner } from './hooks/index.js';
import { createClientAddressResolver, createHttpServer, createRequestHandler } from './http/index.js';
import { createPolicy } from './policy/index.js';
import { createChannelAdapters, DeliveryWorker, type DeliveryPort, type DeliveryWorkerOptions } from './delivery/index.js';
import { abortableSleep, createModelRegistry, createRuntime, type Runtime, type RuntimeOptions } from './runtime/index.js';
import { createSqliteStore, type Store } from './store/index.js';

/** A running gateway. */
export interface Gateway {
  /** The port actually bound (differs from the config when it asked for 0). */
  port: number;
  store: Store;
  runtime: Runtime;
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
  deliveryOptions?: Partial<Pick<DeliveryWorkerOptions, 'maxAttempts' | 'maxAgeMs' | 'backoffBaseMs' | 'backoffMaxMs' | 'pollMs' | 'timeoutMs'>>;
  /** Runtime tuning (tests shorten leases and windows). */
  runtime?: RuntimeOptions;
}

/** Opens the store for a config. */
export function openStore(loaded: LoadedConfig, options: { readonly?: boolean } = {}): Store {
  const store = loaded.config.store;
  if (store.driver !== 'sqlite') {
    throw new Error(`store.driver "${store.driver}" is not available in this build; use "sqlite"`);
  }
  return createSqliteStore({ path: store.path, sync: store.sync, readonly: options.readonly ?? false });
}

/** Starts the gateway for a validated config. */
export async function startGateway(loaded: LoadedConfig, deps: GatewayDeps = {}): Promise<Gateway> {
  const { config } = loaded;
  const scrub = createSecretScrubber(listConfigSecrets(config));
  const log = deps.log ?? createLog({ level: config.gateway.logLevel, scrub });
  const clock = deps.clock ?? systemClock;
  const ids = deps.ids ?? createIds(clock.now);
  for (const w of loaded.warnings) log.warn('config warning', { path: w.path, warning: w.message });
  const store = openStore(loaded);
  let ready = false;

  const deliveryWorker = deps.delivery === undefined
    ? new DeliveryWorker({
      store,
      log,
      now: clock.now,
      random: Math.random,
      channels: config.channels,
      adapters: createChannelAdapters(config.channels, { now: clock.now }),
      owner: `${process.pid}:${ids.next()}`,
      scrub,
      ...deps.deliveryOptions,
    })
    : undefined;
  const runtime = createRuntime({
    config,
    configDir: loaded.dir,
    store,
    models: createModelRegistry(config, clock.now),
    delivery: deps.delivery ?? deliveryWorker!,
    log,
    clock,
    ids,
    retry: { now: clock.now, sleep: abortableSleep, random: Math.random },
    scrub,
  }, { orphanedAtStartup: config.store.driver === 'sqlite', ...deps.runtime });
  const policy = createPolicy({ config, ids, clock });
  const runTransform = createTransformRunner(loaded.transformsDir);
  const handler = createRequestHandler({
    hooks: config.hooks,
    bodyTimeoutMs: config.gateway.bodyTimeoutMs,
    verifyToken: createTokenVerifier(config.hooks.token ?? ''),
    limiter: createAuthLimiter(config.hooks.authRateLimit),
    clientAddress: createClientAddressResolver(config.gateway.trustedProxies),
    handleHook: createHookHandler({
      policy,
      store,
      clock,
      mappings: compileMappings(config.hooks, loaded.transformsDir),
      runTransform,
      onRecorded: (outcome) => {
        if (outcome.kind === 'agent') runtime.notifyRunQueued();
        else if (outcome.kind === 'wake' && outcome.event.mode === 'now') runtime.requestHeartbeat(outcome.event.agentId);
      },
    }),
    clock,
    log,
    isReady: () => ready,
  });
  const http = createHttpServer(handler, { bodyTimeoutMs: config.gateway.bodyTimeoutMs });
  let port: number;
  try {
    await runtime.start();
    // A SQLite store belongs to this process alone: leases left in it are a dead process's.
    if (config.store.driver === 'sqlite') await store.releaseDeliveryLeases();
    deliveryWorker?.start();
    port = await http.listen(deps.port ?? config.gateway.port, config.gateway.bind);
  } catch (error) {
    await deliveryWorker?.stop();
    await runtime.stop();
    await store.close();
    throw error;
  }
  ready = true;
  log.info('gateway listening', {
    url: `http://${config.gateway.bind.includes(':') ? `[${config.gateway.bind}]` : config.gateway.bind}:${port}`,
    hooksPath: config.hooks.enabled ? config.hooks.path : null,
    store: config.store.driver,
  });

  let closing: Promise<void> | undefined;
  return {
    port,
    store,
    runtime,
    close() {
      closing ??= (async () => {
        ready = false;
        await http.close();
        await runtime.stop();
        await deliveryWorker?.stop();
        await runTransform.close();
        await store.close();
        log.info('gateway stopped');
      })();
      return closing;
    },
  };
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
