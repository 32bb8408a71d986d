/** Settings and helpers shared by the runtime part's scenarios and its busy-ingress check. */
import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { envIntList, envNumber, log } from './bench-env.js';
import type { StartedGateway } from './gateway.js';
import { runLeanLoad } from './lean-load.js';
import type { LoadResult } from './load-result.js';
import { spawnNode, stopChild, waitForOutput, type Child } from './proc.js';

const FAKE_JS = fileURLToPath(new URL('./fake-provider.js', import.meta.url));
/** Upper bound for sending one batch of agent requests, s. */
export const ENQUEUE_MAX_S = 120;

export function runtimeSettings() {
  const wakeSeconds = envNumber('BENCH_RUNTIME_WAKE_SECONDS', 10, 1);
  const busyDelayMs = envNumber('BENCH_RUNTIME_BUSY_DELAY_MS', 50, 0);
  const busyConcurrency = Math.floor(envNumber('BENCH_RUNTIME_BUSY_CONCURRENCY', 4, 1));
  // Enough runs to outlast a busy window by half (the pool's pace is known when the fake is slow).
  const busyRunsDefault =
    busyDelayMs > 0 ? Math.ceil(1.5 * busyConcurrency * (1000 / busyDelayMs) * wakeSeconds) : 20_000;
  return {
    runs: Math.floor(envNumber('BENCH_RUNTIME_RUNS', 1000, 0)),
    concurrency: envIntList('BENCH_RUNTIME_CONCURRENCY', [4, 16], 1),
    busyRounds: Math.floor(envNumber('BENCH_RUNTIME_BUSY_ROUNDS', 3, 0)),
    busyRuns: Math.floor(envNumber('BENCH_RUNTIME_BUSY_RUNS', busyRunsDefault, 1)),
    busyDelayMs,
    busyConcurrency,
    wakeSeconds,
    warmupSeconds: envNumber('BENCH_WARMUP_SECONDS', 3, 1),
    drainS: envNumber('BENCH_RUNTIME_DRAIN_S', 180, 1),
    connections: Math.floor(envNumber('BENCH_CONNECTIONS', 50, 1)),
  };
}
export type RuntimeSettings = ReturnType<typeof runtimeSettings>;

export interface Fake {
  child: Child;
  url: string;
  apiKey: string;
}

/** The fake OpenAI server in its own process, answering each completion after `delayMs`. */
export async function startFake(delayMs: number): Promise<Fake> {
  const apiKey = randomBytes(16).toString('hex');
  const child = spawnNode('fake-openai', [FAKE_JS], {
    ...process.env,
    BENCH_FAKE_KEY: apiKey,
    BENCH_FAKE_DELAY_MS: String(delayMs),
  });
  const m = await waitForOutput(child, /^FAKE_URL (\S+)$/m);
  return { child, url: m[1] ?? '', apiKey };
}

/** Stops the fake and returns how many completions it answered. */
export async function stopFake(fake: Fake): Promise<number | null> {
  await stopChild(fake.child);
  const m = /^FAKE_SERVED (\d+)$/m.exec(fake.child.output());
  return m === null ? null : Number(m[1]);
}

/** Config sections that route the default agent to `echo` (no fake) or to the fake, heartbeats off. */
export function agentConfig(fake: Fake | null, maxConcurrentRuns: number): Record<string, unknown> {
  const agents = {
    defaults: { model: fake === null ? 'echo/echo' : 'fake/m', maxConcurrentRuns, heartbeat: { every: 0 } },
  };
  if (fake === null) return { agents };
  return { agents, models: { providers: { fake: { api: 'openai', baseUrl: `${fake.url}/v1`, apiKey: fake.apiKey } } } };
}

/** `--cpu-prof` flags for a gateway when BENCH_CPU_PROF names a directory. */
export function gatewayFlags(tag: string): string[] {
  const dir = process.env['BENCH_CPU_PROF'];
  return dir === undefined
    ? []
    : ['--cpu-prof', `--cpu-prof-dir=${resolve(dir)}`, `--cpu-prof-name=runtime-${tag}-${Date.now()}.cpuprofile`];
}

/** `count` agent runs with bodies `{"message":"task <i>",…}`, as fast as `connections` allow. */
export function enqueueRuns(port: number, token: string, count: number, connections: number): Promise<LoadResult> {
  return runLeanLoad({
    port,
    token,
    path: '/hooks/agent',
    connections,
    seconds: ENQUEUE_MAX_S,
    maxRequests: count,
    bodyPrefix: '{"message":"task ',
    bodySuffix: '","deliver":false,"wakeMode":"next-heartbeat"}',
  });
}

/** SIGTERM (runs in flight get the runtime's grace), logs an unclean exit and anything the gateway wrote. */
export async function stopGateway(gw: StartedGateway): Promise<void> {
  if (gw.child.hasExited()) return;
  const how = await stopChild(gw.child, 20_000);
  if (how !== 'exit code 0') log(`hookgate did not stop cleanly (${how}):\n${gw.child.output()}`);
  const out = gw.child.output().trim();
  // logLevel is warn, so anything here deserves a look.
  if (out !== '') log(`hookgate wrote (last lines):\n${out.split('\n').slice(-5).join('\n')}`);
}

export const isClean = (l: LoadResult): boolean => l.non2xx + l.errors === 0;
