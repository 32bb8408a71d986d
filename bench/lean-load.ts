/**
 * A lean HTTP/1.1 load generator over `node:net`: N keep-alive connections, each sending one POST,
 * reading the whole response, then sending the next. Each body is `bodyPrefix + n + bodySuffix`
 * (n = 1, 2, … across all connections), assembled in a per-connection buffer from precomputed
 * bytes. It parses only what it needs (status line, Content-Length, Connection), reads through
 * `onread` into one reused buffer, and so leaves the server far more of the machine than
 * autocannon does. Latency is per request, from write to the response's last byte.
 */
import { Conn, Run } from './lean-conn.js';
import { requestParts, type RequestParts } from './request-parts.js';
import { percentile, type LoadResult } from './load-result.js';

export interface LeanLoadOptions {
  port: number;
  token: string;
  /** Request path, e.g. `/hooks/wake`. */
  path: string;
  connections: number;
  /** Sending stops after this long (a bound even when `maxRequests` is set). */
  seconds: number;
  /** Stop after this many requests in all; unset: send until `seconds` are over. */
  maxRequests?: number;
  bodyPrefix: string;
  bodySuffix: string;
  /** A response slower than this counts as a timeout and its connection is replaced. @default 10000 */
  timeoutMs?: number;
}

/** In-flight responses get this long to finish once sending stops; then their sockets are cut. */
const DRAIN_MS = 2_000;
const CONNECT_MS = 5_000;

export function runLeanLoad(o: LeanLoadOptions): Promise<LoadResult> {
  const run = new Run(o.maxRequests ?? Number.POSITIVE_INFINITY);
  const req: RequestParts = requestParts(o);
  const timeoutMs = o.timeoutMs ?? 10_000;
  const cpu0 = process.cpuUsage();
  const created = performance.now();
  let t0 = 0;
  let stoppedAt = 0;

  return new Promise((resolve) => {
    const conns: Conn[] = [];
    const timers: NodeJS.Timeout[] = [];
    let finished = false;
    const busy = (): boolean => conns.some((c) => c.sentAt >= 0);

    const finish = (): void => {
      if (finished) return;
      finished = true;
      for (const t of timers) clearTimeout(t);
      for (const c of conns) c.close();
      const now = performance.now();
      const cpu = process.cpuUsage(cpu0);
      // To the last response, or to the end of the window if the server went quiet before it.
      const end = Math.max(run.lastDone, stoppedAt);
      const wallMs = Math.max(1, (end > 0 ? end : now) - (t0 || created));
      const sorted = run.lat.sorted();
      resolve({
        seconds: wallMs / 1000,
        rps: run.ok2xx / (wallMs / 1000),
        p50: percentile(sorted, 0.5),
        p99: percentile(sorted, 0.99),
        ok2xx: run.ok2xx,
        non2xx: run.non2xx,
        errors: run.errors,
        timeouts: run.timeouts,
        statusCodes: run.statusCodes,
        firstError: run.firstError,
        loaderCpuPercent: (100 * (cpu.user + cpu.system)) / 1000 / Math.max(1, now - created),
      });
    };
    const onIdle = (): void => {
      if (!busy()) finish();
    };
    const stopSending = (): void => {
      run.sending = false;
      stoppedAt = performance.now();
      if (!busy()) finish();
      else timers.push(setTimeout(finish, DRAIN_MS));
    };

    let connected = 0;
    const n = Math.max(1, Math.floor(o.connections));
    const start = (): void => {
      if (++connected !== n) return;
      // Timing starts once every connection is up; then all send at once.
      t0 = performance.now();
      run.started = true;
      timers.push(setTimeout(stopSending, o.seconds * 1000));
      const watch = setInterval(() => {
        const now = performance.now();
        for (const c of conns) c.checkTimeout(now, timeoutMs);
      }, 250);
      timers.push(watch);
      for (const c of conns) c.send();
    };
    timers.push(
      setTimeout(() => {
        if (t0 === 0) {
          run.fail(`not all ${n} connections up within ${CONNECT_MS} ms`);
          finish();
        }
      }, CONNECT_MS),
    );
    for (let i = 0; i < n; i++) conns.push(new Conn(run, req, onIdle, start));
  });
}
