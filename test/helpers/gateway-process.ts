import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { request } from 'node:http';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';

/** The shipped CLI entry point (`dist/bundle/main.js`, what `bin` points at), seen from `dist/test/helpers/`. */
export const MAIN_JS = fileURLToPath(new URL('../../bundle/main.js', import.meta.url));

type Env = Record<string, string | undefined>;

/** Every child still running; killed when the test process exits, whatever happened. */
const live = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of live) child.kill('SIGKILL');
});

/** A baseline environment for children: no inherited Hookgate variables. */
function childEnv(env: Env = {}): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (!k.startsWith('HOOKGATE_') && !k.startsWith('NODE_TEST') && k !== 'NODE_OPTIONS') out[k] = v;
  }
  for (const [k, v] of Object.entries(env)) {
    if (v === undefined) delete out[k];
    else out[k] = v;
  }
  return out;
}

/** A free TCP port on 127.0.0.1 (listen on 0, read the port, close). */
export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Whether something can bind `port` on 127.0.0.1 right now. */
export async function isPortFree(port: number): Promise<boolean> {
  const server = createServer();
  try {
    server.listen(port, '127.0.0.1');
    await once(server, 'listening');
    return true;
  } catch {
    return false;
  } finally {
    if (server.listening) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

/** The outcome of one CLI run. */
export interface CliResult {
  /** Exit code; `null` when killed by a signal (e.g. after the timeout). */
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** True when the run did not finish within the timeout and was killed. */
  timedOut: boolean;
}

/** Runs `node dist/bundle/main.js <args>` to completion (killed after `timeoutMs`). */
export async function runHookgate(
  args: readonly string[],
  options: { env?: Env; timeoutMs?: number; cwd?: string } = {},
): Promise<CliResult> {
  const child = spawn(process.execPath, [MAIN_JS, ...args], {
    env: childEnv(options.env),
    cwd: options.cwd ?? process.cwd(),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  live.add(child);
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (s: string) => (stdout += s));
  child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s));
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    child.kill('SIGKILL');
  }, options.timeoutMs ?? 20_000);
  const [code, signal] = (await once(child, 'close')) as [number | null, NodeJS.Signals | null];
  clearTimeout(timer);
  live.delete(child);
  return { code, signal, stdout, stderr, timedOut };
}

/** `GET /healthz` once; the status, or 0 when nothing answered. */
export function healthStatus(port: number): Promise<number> {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, path: '/healthz', agent: false, timeout: 2_000 }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
      res.on('error', () => resolve(0));
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(0));
    req.end();
  });
}

/** A gateway running as a child process: `node dist/bundle/main.js serve …`. */
export interface GatewayProcess {
  child: ChildProcess;
  port: number;
  /** Everything the child wrote so far. */
  output(): { stdout: string; stderr: string };
  /** Resolves with the exit code and signal once the child is gone. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** `kill -9` and wait for the exit. */
  kill(): Promise<void>;
  /** SIGTERM (graceful), SIGKILL after `graceMs`; resolves with the exit code. */
  stop(graceMs?: number): Promise<number | null>;
}

/**
 * Spawns `hookgate serve` with `args` (e.g. `['--config', file]`) and waits until `GET /healthz`
 * on `port` answers 200. The port must be the one the config (or the first-run default) binds.
 */
export async function spawnGateway(
  args: readonly string[],
  port: number,
  options: { env?: Env; readyTimeoutMs?: number } = {},
): Promise<GatewayProcess> {
  const child = spawn(process.execPath, [MAIN_JS, 'serve', ...args], {
    env: childEnv(options.env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  live.add(child);
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (s: string) => (stdout += s));
  child.stderr!.setEncoding('utf8').on('data', (s: string) => (stderr += s));
  let gone = false;
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => {
      gone = true;
      live.delete(child);
      resolve({ code, signal });
    });
  });
  const proc: GatewayProcess = {
    child,
    port,
    output: () => ({ stdout, stderr }),
    exited,
    async kill() {
      if (!gone) child.kill('SIGKILL');
      await exited;
    },
    async stop(graceMs = 10_000) {
      if (gone) return (await exited).code;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      const { code } = await exited;
      clearTimeout(timer);
      return code;
    },
  };
  const deadline = Date.now() + (options.readyTimeoutMs ?? 20_000);
  while (Date.now() < deadline) {
    if (gone) {
      const { code, signal } = await exited;
      throw new Error(
        `gateway exited before it was ready (code ${code}, signal ${signal})\nstdout:\n${stdout}\nstderr:\n${stderr}`,
      );
    }
    if ((await healthStatus(port)) === 200) return proc;
    await new Promise((r) => setTimeout(r, 50));
  }
  await proc.kill();
  throw new Error(`gateway did not answer /healthz within the timeout\nstdout:\n${stdout}\nstderr:\n${stderr}`);
}
