/**
 * The relay part (`BENCH_PART=relay`): a relay and a home gateway as loopback child processes (each
 * its own SQLite store), and an open-loop sender posting RELAY_BENCH_RATE (1,000) wakes a second to
 * the relay for RELAY_BENCH_SECONDS (10), over RELAY_BENCH_CONNECTIONS (32) keep-alive connections,
 * each with an `Idempotency-Key` as a provider's delivery id. The home long-polls the relay (its
 * defaults) and passes each request through its own door. Reported: each request's lag from the
 * sender's 202 to the relay's record of the home's acknowledgement (which the home sends after its
 * commit: an upper bound of the lag to the commit, by the ack's round trip), p50 and p99; the rate
 * of acknowledgements; and that the home holds every request once.
 *
 * The acknowledgement's time is the relay's `Date.now()` (whole ms); the answer's is this process's.
 *
 * Env: RELAY_BENCH_RATE (1000), RELAY_BENCH_SECONDS (10), RELAY_BENCH_CONNECTIONS (32).
 */
import { Agent, request } from 'node:http';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { mkdirSync, writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { envNumber, log } from './bench-env.js';
import { startGatewayWithConfig, type StartedGateway } from './gateway.js';
import type { BenchContext } from './ingress-bench.js';
import { percentile } from './load-result.js';
import { freePort, stopChild } from './proc.js';
import { StoreSchema } from '../src/config/index.js';
import { createStore, type Store } from '../src/store/index.js';

const TARGET_LAG_P99_MS = 100;
const GATEWAY_TOKEN_PREFIX = 'bench-relay-gw-';
const RELAY_TOKEN_PREFIX = 'bench-relay-pull-';

export function relaySettings() {
  return {
    rate: envNumber('RELAY_BENCH_RATE', 1000, 1),
    seconds: envNumber('RELAY_BENCH_SECONDS', 10, 1),
    connections: envNumber('RELAY_BENCH_CONNECTIONS', 32, 1),
  };
}
export type RelaySettings = ReturnType<typeof relaySettings>;

/** The load, the drain and two starts, with room to spare. */
export function relayBudgetS(s: RelaySettings): number {
  return s.seconds + 180;
}

/** Absolute time in ms with sub-millisecond digits, comparable with another process's `Date.now()`. */
const nowMs = (): number => performance.timeOrigin + performance.now();

function writeConfig(dir: string, config: Record<string, unknown>): string {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const path = join(dir, 'hookgate.json');
  writeFileSync(path, JSON.stringify(config, null, 2), { mode: 0o600 });
  return path;
}

async function start(
  ctx: BenchContext,
  name: string,
  sections: (port: number) => Record<string, unknown>,
): Promise<StartedGateway> {
  const dir = join(ctx.root, name);
  const port = await freePort();
  const dbPath = join(dir, 'state', 'hookgate.db');
  const config = writeConfig(dir, {
    gateway: {
      bind: '127.0.0.1',
      port,
      logLevel: 'warn',
      recordPayloads: true,
      auth: { token: `${GATEWAY_TOKEN_PREFIX}${ctx.runId}` },
    },
    store: { driver: 'sqlite', path: dbPath, sync: ctx.sync },
    ...sections(port),
  });
  return startGatewayWithConfig(config, port, dbPath);
}

/** One POST on a kept-alive connection; resolves with the status and body once the answer is read. */
function post(
  agent: Agent,
  port: number,
  token: string,
  key: string,
  body: string,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path: '/hooks/wake',
        method: 'POST',
        agent,
        headers: {
          authorization: `Bearer ${token}`,
          'idempotency-key': key,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

interface Sent {
  /** The relay's id of each request answered 202 → when the answer arrived (absolute ms). */
  answeredAt: Map<string, number>;
  non2xx: number;
  errors: number;
  /** From the first due time to the last answer, s. */
  seconds: number;
  /** Most requests due and not yet sent at once (the sender fell behind its schedule). */
  maxLateMs: number;
}

/**
 * Request n is due at `t0 + n / rate`; it waits for a free connection of `connections` when all
 * are busy. The wait counts in nothing measured here: the lag runs from the answer.
 */
async function sendPaced(port: number, token: string, s: RelaySettings, label: string): Promise<Sent> {
  const total = Math.round(s.rate * s.seconds);
  const answeredAt = new Map<string, number>();
  const agent = new Agent({ keepAlive: true, maxSockets: s.connections });
  const t0 = performance.now() + 100;
  let next = 0;
  let non2xx = 0;
  let errors = 0;
  let maxLateMs = 0;
  const worker = async (): Promise<void> => {
    while (next < total) {
      const n = next++;
      const due = t0 + (n * 1000) / s.rate;
      const early = due - performance.now();
      if (early > 0) await sleep(early);
      else maxLateMs = Math.max(maxLateMs, -early);
      try {
        const answer = await post(
          agent,
          port,
          token,
          `${label}-${n}`,
          `{"text":"${label}-${n}","mode":"next-heartbeat"}`,
        );
        const at = nowMs();
        if (answer.status === 202) answeredAt.set((JSON.parse(answer.body) as { id: string }).id, at);
        else non2xx++;
      } catch {
        errors++;
      }
    }
  };
  await Promise.all(Array.from({ length: s.connections }, worker));
  agent.destroy();
  return { answeredAt, non2xx, errors, seconds: (performance.now() - t0) / 1000, maxLateMs };
}

interface Acked {
  /** answer → acknowledgement at the relay, ms, one per request acknowledged. */
  lagMs: Float64Array;
  /** Requests the relay holds acknowledged; and still pending. */
  done: number;
  pending: number;
  /** Acknowledgements per second from the first to the last. */
  rate: number;
}

/** Waits (bounded) until the relay holds nothing pending, then reads each request's acknowledgement. */
async function readAcks(dbPath: string, sent: Sent, deadlineMs: number): Promise<Acked> {
  const config = StoreSchema.parse({ driver: 'sqlite', path: dbPath });
  let store: Store | undefined;
  try {
    store = await createStore(config, { mode: 'read' });
    while ((await store.readRelayBacklog()).pending > 0 && Date.now() < deadlineMs) await sleep(100);
    const rows = await store.listRelayRequests({ limit: 10_000_000 });
    const lag: number[] = [];
    let first = Number.POSITIVE_INFINITY;
    let last = 0;
    for (const r of rows) {
      const answeredAt = sent.answeredAt.get(r.id);
      if (r.state !== 'done' || r.endedAt === null || answeredAt === undefined) continue;
      lag.push(r.endedAt - answeredAt);
      first = Math.min(first, r.endedAt);
      last = Math.max(last, r.endedAt);
    }
    const lagMs = Float64Array.from(lag).sort();
    return {
      lagMs,
      done: rows.filter((r) => r.state === 'done').length,
      pending: rows.filter((r) => r.state === 'pending').length,
      rate: last > first ? (1000 * lag.length) / (last - first) : 0,
    };
  } finally {
    await store?.close();
  }
}

export async function runRelayBench(ctx: BenchContext, s: RelaySettings): Promise<boolean> {
  log(`relay part: ${JSON.stringify({ ...s, sync: ctx.sync, entry: ctx.entry })}`);
  const relayToken = `${RELAY_TOKEN_PREFIX}${ctx.runId}`;
  const relay = await start(ctx, 'relay', () => ({
    hooks: { enabled: true, token: ctx.token },
    relay: { enabled: true, token: relayToken },
  }));
  let home: StartedGateway | undefined;
  let ok = false;
  try {
    home = await start(ctx, 'home', () => ({
      hooks: { enabled: true, token: `${ctx.token}-home` },
      pull: { url: `http://127.0.0.1:${relay.port}`, token: relayToken },
    }));
    const load0 = loadavg();
    const sent = await sendPaced(relay.port, ctx.token, s, `${ctx.runId}-relay`);
    const acked = await readAcks(relay.dbPath, sent, Date.now() + 60_000);
    const total = Math.round(s.rate * s.seconds);
    const homeStore = await createStore(StoreSchema.parse({ driver: 'sqlite', path: home.dbPath }), { mode: 'read' });
    let wakes: number;
    let distinct: number;
    try {
      const events = await homeStore.listSystemEvents({ limit: 10_000_000 });
      wakes = events.length;
      distinct = new Set(events.map((e) => e.text)).size;
    } finally {
      await homeStore.close();
    }
    const p = (q: number): string => percentile(acked.lagMs, q).toFixed(1);
    ok = sent.non2xx === 0 && sent.errors === 0 && acked.pending === 0 && wakes === total && distinct === total;
    const p99 = percentile(acked.lagMs, 0.99);
    log('');
    log(
      `relay end to end: relay and home on loopback (each its own SQLite, sync=${ctx.sync}), gateway ${ctx.entry}, ` +
        `${cpus().length} cores, load average ${load0.map((l) => l.toFixed(2)).join(' ')} before the load`,
    );
    log(
      `open loop ${s.rate}/s for ${s.seconds} s over ${s.connections} connections: ${total - sent.non2xx - sent.errors} of ${total} answered 202 ` +
        `in ${sent.seconds.toFixed(1)} s (sender at most ${sent.maxLateMs.toFixed(0)} ms behind its schedule); ` +
        `${sent.non2xx} non-2xx, ${sent.errors} errors`,
    );
    log(
      `home: ${wakes} wakes for ${total} requests (${distinct} distinct: ${wakes === total && distinct === total ? 'each once' : 'NOT EACH ONCE'}); ` +
        `acknowledged at ${acked.rate.toFixed(0)}/s; ${acked.pending} left pending at the relay`,
    );
    log(
      `lag from the sender's 202 to the home's acknowledgement (after its commit): p50 ${p(0.5)} ms, p90 ${p(0.9)} ms, ` +
        `p99 ${p(0.99)} ms, max ${p(1)} ms (goal p99 <= ${TARGET_LAG_P99_MS} ms: ${p99 <= TARGET_LAG_P99_MS ? 'ok' : 'MISS'})`,
    );
    if (!ok) log('relay part: FAILED (non-2xx, errors, requests left pending, or a wake missing or twice; see above)');
  } finally {
    if (home !== undefined) {
      const how = await stopChild(home.child);
      if (how !== 'exit code 0') log(`home did not stop cleanly (${how}):\n${home.child.output()}`);
    }
    const how = await stopChild(relay.child);
    if (how !== 'exit code 0') log(`relay did not stop cleanly (${how}):\n${relay.child.output()}`);
  }
  return ok;
}
