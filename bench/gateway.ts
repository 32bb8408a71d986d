/** Starts the Hookgate gateway (`node <entry> serve --config …`) as a child process for the benchmark. */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { envChoice } from './bench-env.js';
import { freePort, spawnNode, waitHealthy, type Child } from './proc.js';

const BUNDLE_JS = fileURLToPath(new URL('../bundle/main.js', import.meta.url));
const SRC_JS = fileURLToPath(new URL('../src/main.js', import.meta.url));

/**
 * The gateway entry point: the shipped bundle (`dist/bundle/main.js`, what `bin` runs) when the
 * build made one, else the compiled modules; BENCH_ENTRY=src forces the modules (readable profiles).
 */
export function gatewayEntry(): { kind: 'bundle' | 'src'; path: string } {
  const fallback = existsSync(BUNDLE_JS) ? 'bundle' : 'src';
  const kind = envChoice('BENCH_ENTRY', ['bundle', 'src'] as const, fallback);
  if (kind === 'bundle' && !existsSync(BUNDLE_JS))
    throw new Error(`BENCH_ENTRY=bundle but ${BUNDLE_JS} is missing (npm run build)`);
  return { kind, path: kind === 'bundle' ? BUNDLE_JS : SRC_JS };
}

export interface GatewayOptions {
  /** State and config live here (created). */
  dir: string;
  token: string;
  sync: 'full' | 'normal';
  /** Config sections beyond gateway, hooks and store (agents, models). */
  extra?: Record<string, unknown>;
  /** Replaces the SQLite store section (PostgreSQL for the fleet part). */
  store?: Record<string, unknown>;
  nodeFlags?: readonly string[];
  /** The `main.js` to run (another build's, for the compare part). @default gatewayEntry().path */
  entry?: string;
  /** `gateway.logLevel`; `null` writes none, so the gateway runs at its own default. @default 'warn' */
  logLevel?: string | null;
  /** Other `gateway` keys (they must be ones every build compared knows). */
  gateway?: Record<string, unknown>;
  /** The gateway's output goes to this file instead of a pipe (see `SpawnOptions.logFile`). */
  logFile?: string;
}

export interface StartedGateway {
  child: Child;
  port: number;
  /** Spawn to first 200 of `/healthz`, ms. */
  startMs: number;
  dbPath: string;
}

/** Writes a gateway config into `dir` (state under `dir/state`) and returns its path. */
export function writeGatewayConfig(o: GatewayOptions, port: number, dbPath: string): string {
  mkdirSync(o.dir, { recursive: true, mode: 0o700 });
  const config = {
    gateway: {
      bind: '127.0.0.1',
      port,
      ...(o.logLevel === null ? {} : { logLevel: o.logLevel ?? 'warn' }),
      ...o.gateway,
    },
    hooks: { enabled: true, token: o.token, path: '/hooks' },
    store: o.store ?? { driver: 'sqlite', path: dbPath, sync: o.sync },
    ...o.extra,
  };
  const path = join(o.dir, 'hookgate.json');
  writeFileSync(path, JSON.stringify(config, null, 2), { mode: 0o600 });
  return path;
}

export async function startGateway(o: GatewayOptions): Promise<StartedGateway> {
  const port = await freePort();
  const dbPath = join(o.dir, 'state', 'hookgate.db');
  const config = writeGatewayConfig(o, port, dbPath);
  return startGatewayWithConfig(config, port, dbPath, o.nodeFlags, {
    ...(o.entry === undefined ? {} : { entry: o.entry }),
    ...(o.logFile === undefined ? {} : { logFile: o.logFile }),
  });
}

/** Starts a gateway on a config file already written (replicas share one store section). */
export async function startGatewayWithConfig(
  config: string,
  port: number,
  dbPath: string,
  nodeFlags: readonly string[] = [],
  options: { entry?: string; logFile?: string } = {},
): Promise<StartedGateway> {
  const t0 = performance.now();
  const entry = options.entry ?? gatewayEntry().path;
  const child = spawnNode(
    'hookgate',
    [...nodeFlags, entry, 'serve', '--config', config],
    process.env,
    options.logFile === undefined ? {} : { logFile: options.logFile },
  );
  await waitHealthy(child, port);
  return { child, port, startMs: performance.now() - t0, dbPath };
}
