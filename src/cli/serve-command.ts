import { existsSync } from 'node:fs';
import { formatIssues } from '../common/errors.js';
import { createLog } from '../common/log.js';
import { createSecretScrubber } from '../common/scrub-secrets.js';
import { listConfigSecrets, writeDefaultConfig, type LoadedConfig } from '../config/index.js';
import { StoreLockedError, StoreOpenError } from '../store/index.js';
import { EXIT_FAILURE, EXIT_USAGE, type CliDeps, type RunningGateway } from './cli-deps.js';
import { createReloader } from './create-reloader.js';
import { loadOrReport } from './load-or-report.js';
import { preflightConfig } from './preflight-config.js';
import { watchConfigFile } from './watch-config.js';

interface ServeOptions {
  /** The config path was named (`--config` or `$HOOKGATE_CONFIG`): it must exist. */
  explicit: boolean;
  port?: string | undefined;
  bind?: string | undefined;
}

function printFirstRun(path: string, hooksToken: string, gatewayToken: string, deps: CliDeps): void {
  deps.stdout(
    `Wrote a new config to ${path}\n` +
      `  hooks token:   ${hooksToken}\n` +
      `  gateway token: ${gatewayToken}\n` +
      'These tokens are shown only this once; they are stored in the config file.\n',
  );
}

/** Where this machine reaches the gateway: a wildcard bind is reached on loopback. */
function originOf(loaded: LoadedConfig, port: number): string {
  const { bind } = loaded.config.gateway;
  const host = bind === '0.0.0.0' || bind === '::' ? '127.0.0.1' : bind;
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

function curlLine(loaded: LoadedConfig, port: number): string {
  const { hooks } = loaded.config;
  const origin = originOf(loaded, port);
  return (
    `curl -sS -X POST ${origin}${hooks.path}/wake -H 'Authorization: Bearer ${hooks.token ?? '<token>'}' ` +
    `-H 'Content-Type: application/json' -d '{"text":"Hello from curl","mode":"now"}'`
  );
}

/** `--port N`: an integer 0-65535, or the reason it is not. */
function parsePort(raw: string): number | string {
  return /^\d+$/.test(raw) && Number(raw) <= 65_535
    ? Number(raw)
    : `--port must be a port number (0-65535), got "${raw}"`;
}

/**
 * `hookgate serve`: writes a starter config on a bare first run, refuses a named config that does
 * not exist, refuses what `check` refuses, then runs until SIGINT/SIGTERM; SIGHUP or saving the
 * file reloads the config.
 */
export async function serveCommand(
  configPath: string,
  options: ServeOptions,
  deps: CliDeps,
): Promise<number | undefined> {
  const port = options.port === undefined ? undefined : parsePort(options.port);
  if (typeof port === 'string') {
    deps.stderr(`hookgate: ${port}\n`);
    return EXIT_USAGE;
  }
  const override = (loaded: LoadedConfig): LoadedConfig => {
    if (port !== undefined) loaded.config.gateway.port = port;
    if (options.bind !== undefined) loaded.config.gateway.bind = options.bind;
    return loaded;
  };
  let firstRun = false;
  if (!existsSync(configPath)) {
    if (options.explicit) {
      deps.stderr(
        `hookgate: no config file at ${configPath}\n  (a config named by --config or $HOOKGATE_CONFIG must exist; "hookgate init --config ${configPath}" writes one)\n`,
      );
      return EXIT_FAILURE;
    }
    const tokens = writeDefaultConfig(configPath);
    printFirstRun(configPath, tokens.hooksToken, tokens.gatewayToken, deps);
    firstRun = true;
  }
  const read = loadOrReport(configPath, deps);
  if (read === null) return EXIT_FAILURE;
  const loaded = override(read);
  const issues = await preflightConfig(loaded);
  if (issues.length > 0) {
    deps.stderr(`hookgate: Invalid configuration in ${configPath}\n${formatIssues(issues)}\n`);
    return EXIT_FAILURE;
  }
  // Errors can echo a configured secret (a provider repeating a wrong key): scrubbed before written.
  const log = createLog({
    level: loaded.config.gateway.logLevel,
    scrub: createSecretScrubber(listConfigSecrets(loaded.config)),
  });
  let gateway: RunningGateway;
  try {
    gateway = await deps.startGateway(loaded, { log });
  } catch (error) {
    // The store could not be opened: a second gateway on a SQLite database, an unreachable or outdated PostgreSQL.
    if (error instanceof StoreLockedError || error instanceof StoreOpenError) {
      deps.stderr(`hookgate: ${error.message}\n`);
      return EXIT_FAILURE;
    }
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'EADDRINUSE' && code !== 'EACCES' && code !== 'EADDRNOTAVAIL') throw error;
    const { bind, port: p } = loaded.config.gateway;
    const why =
      code === 'EADDRINUSE'
        ? 'the address is already in use'
        : code === 'EACCES'
          ? 'permission denied'
          : 'the address is not available here';
    deps.stderr(`hookgate: cannot listen on ${bind}:${p}: ${why} (gateway.bind / gateway.port in ${configPath})\n`);
    return EXIT_FAILURE;
  }
  if (firstRun && loaded.config.hooks.enabled) {
    deps.stdout(`Try it:\n  ${curlLine(loaded, gateway.port)}\n`);
  }
  if (firstRun) {
    deps.stdout(
      `Dashboard: ${originOf(loaded, gateway.port)}/admin (log in with the gateway token above, ` +
        'gateway.auth.token in the config file)\n',
    );
  }
  const reload = createReloader({
    path: configPath,
    env: deps.env,
    log,
    gateway,
    preflight: (l) => preflightConfig(l),
    override,
  });
  const onHup = (): void => void reload('SIGHUP');
  const stopWatching = watchConfigFile(configPath, () => void reload('file changed'));
  const fatal = (error: unknown): void => {
    log.error('fatal error; exiting', { err: error });
    log.flush();
    process.exit(1);
  };
  const stop = (): void => {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
    process.off('SIGHUP', onHup);
    stopWatching();
    gateway.close().then(
      () => {
        log.flush();
        process.exit(0);
      },
      (error: unknown) => fatal(error),
    );
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  process.on('SIGHUP', onHup);
  process.on('uncaughtException', fatal);
  process.on('unhandledRejection', fatal);
  return undefined;
}
