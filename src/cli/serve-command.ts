import { existsSync } from 'node:fs';
import { writeDefaultConfig, type LoadedConfig } from '../config/index.js';
import { StoreLockedError } from '../store/index.js';
import { EXIT_FAILURE, type CliDeps } from './cli-deps.js';
import { loadOrReport } from './load-or-report.js';

function printFirstRun(path: string, hooksToken: string, gatewayToken: string, deps: CliDeps): void {
  deps.stdout(
    `Wrote a new config to ${path}\n` +
      `  hooks token:   ${hooksToken}\n` +
      `  gateway token: ${gatewayToken}\n` +
      'These tokens are shown only this once; they are stored in the config file.\n',
  );
}

function curlLine(loaded: LoadedConfig, port: number): string {
  const { gateway, hooks } = loaded.config;
  const host = gateway.bind === '0.0.0.0' || gateway.bind === '::' ? '127.0.0.1' : gateway.bind;
  const origin = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  return `curl -sS -X POST ${origin}${hooks.path}/wake -H 'Authorization: Bearer ${hooks.token ?? '<token>'}' ` +
    `-H 'Content-Type: application/json' -d '{"text":"Hello from curl","mode":"now"}'`;
}

/** `hookgate serve`: writes a starter config on first run, then runs until SIGINT/SIGTERM. */
export async function serveCommand(configPath: string, deps: CliDeps): Promise<number | undefined> {
  let firstRun = false;
  if (!existsSync(configPath)) {
    const tokens = writeDefaultConfig(configPath);
    printFirstRun(configPath, tokens.hooksToken, tokens.gatewayToken, deps);
    firstRun = true;
  }
  const loaded = loadOrReport(configPath, deps);
  if (loaded === null) return EXIT_FAILURE;
  let gateway: { port: number; close(): Promise<void> };
  try {
    gateway = await deps.startGateway(loaded);
  } catch (error) {
    if (error instanceof StoreLockedError) {
      deps.stderr(`hookgate: ${error.message}\n`);
      return EXIT_FAILURE;
    }
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'EADDRINUSE' && code !== 'EACCES' && code !== 'EADDRNOTAVAIL') throw error;
    const { bind, port } = loaded.config.gateway;
    const why = code === 'EADDRINUSE' ? 'the address is already in use' : code === 'EACCES' ? 'permission denied' : 'the address is not available here';
    deps.stderr(`hookgate: cannot listen on ${bind}:${port}: ${why} (gateway.bind / gateway.port in ${configPath})\n`);
    return EXIT_FAILURE;
  }
  if (firstRun && loaded.config.hooks.enabled) {
    deps.stdout(`Try it:\n  ${curlLine(loaded, gateway.port)}\n`);
  }
  const stop = (): void => {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
    gateway.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  return undefined;
}
