/**
 * The MCP Events part (`BENCH_PART=mcp`): occurrences fanned out to webhook subscribers on loopback.
 * One gateway (MCP on, SQLite) is measured three ways: its closed-loop ingress rate on
 * `POST /hooks/wake` with no subscriber; the same with MCP_BENCH_SUBSCRIBERS (10) subscribed to
 * `hook.wake`, every occurrence going to each; and an open-loop schedule of MCP_BENCH_RATE (2,000)
 * wakes a second, after which the subscribers report each occurrence's lag from the gateway's
 * receipt of its hook to their 2xx (p50, p99). The subscribers live in a child process of their own
 * (mcp-subscribers.ts) and verify every signature.
 *
 * Env: MCP_BENCH_SUBSCRIBERS (10), MCP_BENCH_RATE (2000), MCP_BENCH_SECONDS (10),
 * MCP_BENCH_CONNECTIONS (50, the closed loop's; the open loop uses 32); BENCH_CPU_PROF=<dir> profiles the gateway.
 */
import { cpus, loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { envNumber, log } from './bench-env.js';
import { startGateway } from './gateway.js';
import type { BenchContext } from './ingress-bench.js';
import { runLoad } from './load.js';
import { runOpenLoopLoad } from './open-loop-load.js';
import { spawnNode, stopChild, waitForOutput } from './proc.js';

const SUBSCRIBERS_JS = fileURLToPath(new URL('./mcp-subscribers.js', import.meta.url));
const TARGET_LAG_P99_MS = 50;
const TARGET_RATIO = 0.9;

export function mcpSettings() {
  return {
    subscribers: envNumber('MCP_BENCH_SUBSCRIBERS', 10, 1),
    rate: envNumber('MCP_BENCH_RATE', 2000, 1),
    seconds: envNumber('MCP_BENCH_SECONDS', 10, 1),
    connections: envNumber('MCP_BENCH_CONNECTIONS', 50, 1),
  };
}
export type McpSettings = ReturnType<typeof mcpSettings>;

/** Three loads, the open loop's drain (its backlog, when the subscribers fall behind), and room to spare. */
export function mcpBudgetS(s: McpSettings): number {
  return 3 * s.seconds + 300;
}

interface Report {
  delivered: number;
  perCallback: number[];
  badSignatures: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

const MCP_TOKEN_PREFIX = 'bench-mcp-';

export async function runMcpBench(ctx: BenchContext, s: McpSettings): Promise<boolean> {
  log(`mcp part: ${JSON.stringify({ ...s, sync: ctx.sync, entry: ctx.entry })}`);
  const mcpToken = `${MCP_TOKEN_PREFIX}${ctx.runId}`;
  const cpuProfDir = process.env['BENCH_CPU_PROF'];
  const gw = await startGateway({
    dir: join(ctx.root, 'mcp'),
    token: ctx.token,
    sync: ctx.sync,
    extra: { mcp: { enabled: true, token: mcpToken, allowLoopbackCallbacks: true, maxSubscriptions: 100 } },
    nodeFlags: cpuProfDir === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${resolve(cpuProfDir)}`],
  });
  const subs = spawnNode('mcp-subscribers', [SUBSCRIBERS_JS, String(s.subscribers)], process.env);
  let ok = true;
  try {
    const ready = JSON.parse((await waitForOutput(subs, /^ready (.*)$/m))[1]!) as {
      control: number;
      callbacks: Array<{ port: number; secret: string }>;
    };
    const control = `http://127.0.0.1:${ready.control}`;
    const report = async (): Promise<Report> => (await (await fetch(`${control}/report`)).json()) as Report;
    const closed = (label: string) =>
      runLoad({
        loader: ctx.loader,
        port: gw.port,
        token: ctx.token,
        connections: s.connections,
        seconds: s.seconds,
        label: `${ctx.runId}-${label}`,
        mode: 'next-heartbeat',
      });
    /** Waits until each subscriber has `n` occurrences (bounded). */
    const drained = async (n: number): Promise<Report> => {
      for (let i = 0; i < 1200; i++) {
        const r = await report();
        if (r.perCallback.every((c) => c >= n)) return r;
        await sleep(100);
      }
      return report();
    };

    const alone = await closed('mcp0');
    log(
      `without subscribers: ${alone.rps.toFixed(0)} wakes/s (p99 ${alone.p99.toFixed(2)} ms, ${alone.non2xx} non-2xx)`,
    );

    const call = async (method: string, id: number, params: Record<string, unknown>): Promise<void> => {
      const res = await fetch(`http://127.0.0.1:${gw.port}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${mcpToken}` },
        body: JSON.stringify({ jsonrpc: '2.0', id, method, params }),
      });
      const answer = (await res.json()) as { error?: unknown };
      if (answer.error !== undefined) throw new Error(`${method} failed: ${JSON.stringify(answer.error)}`);
    };
    /** Every subscriber subscribed to hook.wake from now (a backlog left before is dropped). */
    const subscribeAll = async (): Promise<void> => {
      for (const [i, cb] of ready.callbacks.entries()) {
        await call('events/subscribe', i, {
          name: 'hook.wake',
          delivery: { mode: 'webhook', url: `http://127.0.0.1:${cb.port}/hook`, secret: cb.secret },
          cursor: null,
        });
      }
    };
    await subscribeAll();

    const fanned = await closed('mcp10');
    const afterClosed = await report();
    log(
      `with ${s.subscribers} subscribers: ${fanned.rps.toFixed(0)} wakes/s (p99 ${fanned.p99.toFixed(2)} ms), ` +
        `${afterClosed.delivered} of ${s.subscribers * fanned.ok2xx} deliveries made by the end of the load`,
    );
    // The closed loop's backlog is not the open loop's lag: the subscriptions start over from now.
    for (const [i, cb] of ready.callbacks.entries())
      await call('events/unsubscribe', i, { name: 'hook.wake', delivery: { url: `http://127.0.0.1:${cb.port}/hook` } });
    await sleep(1000);
    await subscribeAll();
    await fetch(`${control}/reset`, { method: 'POST' });

    const open = await runOpenLoopLoad({
      port: gw.port,
      token: ctx.token,
      path: '/hooks/wake',
      rate: s.rate,
      connections: 32,
      seconds: s.seconds,
      bodyPrefix: `{"text":"${ctx.runId}-mcpo-`,
      bodySuffix: '","mode":"next-heartbeat"}',
    });
    const lag = await drained(open.ok2xx);
    const ratio = fanned.rps / alone.rps;
    const all = lag.perCallback.every((c) => c === open.ok2xx);
    ok = alone.non2xx === 0 && fanned.non2xx === 0 && open.ok2xx === open.scheduled && all && lag.badSignatures === 0;
    log('');
    log(
      `MCP Events fan-out: ${s.subscribers} webhook subscribers on loopback (one process), hook.wake, SQLite sync=${ctx.sync}, ` +
        `gateway ${ctx.entry}, ${cpus().length} cores, load average ${loadavg()
          .map((l) => l.toFixed(2))
          .join(' ')}`,
    );
    log(
      `open loop ${s.rate}/s for ${s.seconds} s: ${open.ok2xx} of ${open.scheduled} acknowledged (ingress p99 ${open.latency.p99.toFixed(2)} ms from due); ` +
        `${lag.delivered} deliveries (${s.subscribers} x ${open.ok2xx}: ${all ? 'every one' : 'MISSING SOME'})`,
    );
    log(
      `lag from receipt to the subscriber's 2xx: p50 ${lag.p50} ms, p90 ${lag.p90} ms, p99 ${lag.p99} ms, max ${lag.max} ms ` +
        `(goal p99 <= ${TARGET_LAG_P99_MS} ms: ${lag.p99 <= TARGET_LAG_P99_MS ? 'ok' : 'MISS'})`,
    );
    log(
      `closed-loop ingress rate with ${s.subscribers} subscribers against none: ${fanned.rps.toFixed(0)} / ${alone.rps.toFixed(0)} = ${ratio.toFixed(3)} ` +
        `(goal >= ${TARGET_RATIO}: ${ratio >= TARGET_RATIO ? 'ok' : 'MISS'})`,
    );
    if (!ok) log('mcp part: FAILED (non-2xx, missing deliveries or bad signatures; see above)');
  } finally {
    await stopChild(subs);
    const how = await stopChild(gw.child);
    if (how !== 'exit code 0') log(`hookgate did not stop cleanly (${how}):\n${gw.child.output()}`);
  }
  return ok;
}
