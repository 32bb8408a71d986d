/**
 * `npm run fuzz`: random requests against a real gateway (a child process on a free loopback port,
 * with mapped hooks, templates and signed senders), by default 100,000 of them. Passes when no
 * request is answered 500, none is left hanging, the gateway is still up and answers `/healthz`
 * after the last one, and its resident memory grew by less than a bound past the warm-up. Not part
 * of `npm test`: a run takes minutes. Failing requests are written out, as raw bytes in base64, to
 * replay by hand.
 *
 * FUZZ_CASES (100000), FUZZ_SEED (random, printed), FUZZ_CONCURRENCY (8), FUZZ_MAX_GROWTH_MB (128).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { envNumber } from './bench-env.js';
import {
  FUZZ_GATEWAY_TOKEN,
  FUZZ_HOOK_TOKEN,
  FUZZ_MAPPINGS,
  FUZZ_TRANSFORM,
  fuzzCase,
  requestBytes,
  type FuzzCase,
} from './fuzz-cases.js';
import { startGatewayWithConfig } from './gateway.js';
import { freePort, killAllSync, readRssKb, stopChild, waitHealthy } from './proc.js';

const CASES = envNumber('FUZZ_CASES', 100_000, 1);
const SEED = envNumber('FUZZ_SEED', Math.floor(Math.random() * 2 ** 31), 0);
const CONCURRENCY = envNumber('FUZZ_CONCURRENCY', 8, 1);
const MAX_GROWTH_MB = envNumber('FUZZ_MAX_GROWTH_MB', 128, 1);
/** A case with no complete answer within this long counts as hanging (the body deadline is 500 ms). */
const ANSWER_TIMEOUT_MS = 10_000;
const BATCH = 1000;

/** What one request got back: its status, `closed` when the gateway closed without answering, or `hang`. */
type Outcome = number | 'closed' | 'hang';

/** Sends raw bytes and reads the status line of the final answer (a `100 Continue` is skipped). */
function exchange(port: number, bytes: Buffer): Promise<Outcome> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    let head = '';
    let outcome: Outcome | undefined;
    const timer = setTimeout(() => finish('hang'), ANSWER_TIMEOUT_MS);
    function finish(o: Outcome): void {
      outcome ??= o;
      clearTimeout(timer);
      socket.destroy();
      resolve(outcome);
    }
    // Written, not ended: Node's server drops a request whose client half-closes before the answer.
    socket.on('connect', () => socket.write(bytes));
    socket.on('data', (chunk: Buffer) => {
      if (outcome !== undefined) return;
      head += chunk.toString('latin1');
      for (;;) {
        const m = /^HTTP\/1\.[01] (\d{3})[^\r\n]*\r\n/.exec(head);
        const end = head.indexOf('\r\n\r\n');
        if (m === null || end === -1) return;
        const status = Number(m[1]);
        if (status !== 100) return finish(status);
        head = head.slice(end + 4);
      }
    });
    // The server may close its side after a refusal while we are still writing.
    socket.on('error', () => finish('closed'));
    socket.on('close', () => finish('closed'));
  });
}

function writeConfig(dir: string, port: number): string {
  const config = {
    gateway: {
      bind: '127.0.0.1',
      port,
      logLevel: 'silent',
      auth: { token: FUZZ_GATEWAY_TOKEN },
      bodyTimeoutMs: 500,
      recordPayloads: true,
      trustedProxies: ['127.0.0.1'],
    },
    hooks: {
      enabled: true,
      token: FUZZ_HOOK_TOKEN,
      allowRequestSessionKey: true,
      allowedSessionKeyPrefixes: ['hook:'],
      presets: ['gmail'],
      mappings: FUZZ_MAPPINGS,
    },
    agents: { defaults: { heartbeat: { every: 0 } } },
    store: { driver: 'sqlite', path: join(dir, 'state', 'hookgate.db'), sync: 'normal' },
  };
  mkdirSync(join(dir, 'hooks', 'transforms'), { recursive: true });
  writeFileSync(join(dir, 'hooks', 'transforms', 'fuzz-transform.mjs'), FUZZ_TRANSFORM);
  const path = join(dir, 'hookgate.json');
  writeFileSync(path, JSON.stringify(config, null, 2), { mode: 0o600 });
  return path;
}

/** Runs `items` through `work`, `limit` at a time. */
async function pool<T>(items: readonly T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lanes = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) await work(items[next++]!);
  });
  await Promise.all(lanes);
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'hookgate-fuzz-'));
  const port = await freePort();
  const gw = await startGatewayWithConfig(writeConfig(dir, port), port, join(dir, 'state', 'hookgate.db'));
  const statuses = new Map<string, number>();
  const failures: Array<{ outcome: Outcome; request: string; case: FuzzCase }> = [];
  const rss: number[] = [];
  const sampler = setInterval(() => {
    const kb = readRssKb(gw.child.pid);
    if (kb !== undefined) rss.push(kb);
  }, 250);
  const started = performance.now();
  let done = 0;
  let warmRssKb = 0;
  console.log(`fuzz: ${CASES} cases, seed ${SEED}, ${CONCURRENCY} at once, gateway pid ${gw.child.pid} on ${port}`);
  try {
    for (let batch = 0; batch * BATCH < CASES && !gw.child.hasExited(); batch++) {
      const cases = fc.sample(fuzzCase, { numRuns: Math.min(BATCH, CASES - batch * BATCH), seed: SEED + batch });
      await pool(cases, CONCURRENCY, async (c) => {
        // Each case comes from one of 4096 client addresses (through the trusted proxy), so bad
        // tokens lock some of them out now and then and never the whole run.
        const bytes = requestBytes(c, port, `10.0.${(done >> 8) & 15}.${done & 255}`);
        const outcome = await exchange(port, bytes);
        statuses.set(String(outcome), (statuses.get(String(outcome)) ?? 0) + 1);
        if (outcome === 500 || outcome === 'hang') {
          failures.push({ outcome, request: bytes.subarray(0, 64 * 1024).toString('base64'), case: c });
        }
        done++;
      });
      if (done >= CASES / 10 && warmRssKb === 0) warmRssKb = readRssKb(gw.child.pid) ?? 0;
      if ((batch + 1) % 10 === 0) console.log(`  ${done} cases, ${failures.length} failing, rss ${rss.at(-1)} kB`);
    }
  } finally {
    clearInterval(sampler);
  }
  const seconds = (performance.now() - started) / 1000;
  const alive = !gw.child.hasExited();
  let healthy = false;
  if (alive) {
    try {
      await waitHealthy(gw.child, port, 5_000);
      healthy = true;
    } catch {
      healthy = false;
    }
  }
  const endRssKb = readRssKb(gw.child.pid) ?? rss.at(-1) ?? 0;
  const maxRssKb = Math.max(...rss);
  await stopChild(gw.child);
  const growthMb = (endRssKb - warmRssKb) / 1024;
  console.log(`\ncases ${done} in ${seconds.toFixed(1)} s (${Math.round(done / seconds)}/s), seed ${SEED}`);
  console.log(
    `statuses: ${[...statuses]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([s, n]) => `${s}=${n}`)
      .join(' ')}`,
  );
  console.log(
    `rss: start ${rss[0]} kB, after warm-up ${warmRssKb} kB, end ${endRssKb} kB, max ${maxRssKb} kB (growth ${growthMb.toFixed(1)} MB, bound ${MAX_GROWTH_MB} MB)`,
  );
  console.log(
    `gateway after the run: ${alive ? 'up' : `exited (${await gw.child.exited})`}, /healthz ${healthy ? '200' : 'no answer'}`,
  );
  if (failures.length > 0) {
    const out = join(tmpdir(), `hookgate-fuzz-failures-${SEED}.jsonl`);
    writeFileSync(out, failures.map((f) => JSON.stringify({ ...f, case: { ...f.case, body: undefined } })).join('\n'));
    console.log(`${failures.length} failing requests written to ${out}`);
    for (const f of failures.slice(0, 5)) {
      console.log(
        `  ${f.outcome}: ${Buffer.from(f.request, 'base64').toString('latin1').slice(0, 300).replace(/\r\n/g, '\\r\\n')}`,
      );
    }
  }
  if (!alive) console.log(gw.child.output());
  rmSync(dir, { recursive: true, force: true });
  const ok = failures.length === 0 && alive && healthy && growthMb <= MAX_GROWTH_MB;
  console.log(ok ? 'fuzz: passed' : 'fuzz: FAILED');
  process.exitCode = ok ? 0 : 1;
}

process.on('exit', killAllSync);
process.on('SIGINT', () => {
  killAllSync();
  process.exit(130);
});
await main();
