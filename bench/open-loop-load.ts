/**
 * An open-loop HTTP/1.1 load generator: request i is due at `t0 + i / rate`, whatever happened
 * to the ones before it, and its latency is measured from that due time, so a server that stalls
 * shows the stall in every request that fell due meanwhile (no coordinated omission).
 *
 * The requests go over a pool of keep-alive connections with pipelining off: a request that falls
 * due while every connection is busy waits, in due order, for the first connection to free up, and
 * that wait counts in its latency. The schedule is checked every millisecond and on every
 * response; a request is never sent before it is due. Request bodies are
 * `bodyPrefix + n + bodySuffix` with n = 1, 2, … in due order.
 */
import { OpenLoopConn, type OpenLoopEvents } from './open-loop-conn.js';
import { requestParts } from './request-parts.js';
import { percentile } from './load-result.js';

export interface OpenLoopOptions {
  port: number;
  token: string;
  /** Request path, e.g. `/hooks/wake`. */
  path: string;
  /** Requests per second. */
  rate: number;
  connections: number;
  /** The schedule's length: `rate * seconds` requests. */
  seconds: number;
  bodyPrefix: string;
  bodySuffix: string;
  /** A response slower than this loses its request and its connection is replaced. @default 10000 */
  timeoutMs?: number;
  /** How long after the last due time the run waits for responses still due. @default 15000 */
  drainMs?: number;
}

export interface LatencyPercentiles {
  p50: number;
  p90: number;
  p99: number;
  p999: number;
  max: number;
}

export interface OpenLoopResult {
  /** Requests in the schedule. */
  scheduled: number;
  /** Requests written to a socket. */
  sent: number;
  ok2xx: number;
  non2xx: number;
  /** Requests sent but never answered (socket error, close, timeout, unparsable response, drain over). */
  lost: number;
  statusCodes: Record<string, number>;
  firstError: string | null;
  /** From the due time to the response's last byte, ms: what a client on this schedule sees. */
  latency: LatencyPercentiles;
  /** From the write to the response's last byte, ms: the server's share. */
  service: LatencyPercentiles;
  /** From the due time to the write, ms: waiting for a free connection (and for this process). */
  wait: LatencyPercentiles;
  /** Most requests due but not yet sent at one moment. */
  maxBacklog: number;
  /** From the first due time to the last response, s. */
  seconds: number;
  /** CPU this process used, in % of one core: it shares the machine with the server. */
  loaderCpuPercent: number;
}

const CONNECT_MS = 5_000;

function percentiles(values: Float64Array): LatencyPercentiles {
  const sorted = values.slice().sort();
  return {
    p50: percentile(sorted, 0.5),
    p90: percentile(sorted, 0.9),
    p99: percentile(sorted, 0.99),
    p999: percentile(sorted, 0.999),
    max: sorted.length === 0 ? Number.NaN : sorted[sorted.length - 1]!,
  };
}

export function runOpenLoopLoad(o: OpenLoopOptions): Promise<OpenLoopResult> {
  const total = Math.max(1, Math.round(o.rate * o.seconds));
  const intervalMs = 1000 / o.rate;
  const timeoutMs = o.timeoutMs ?? 10_000;
  const latency = new Float64Array(total);
  const service = new Float64Array(total);
  const wait = new Float64Array(total);
  let answered = 0;
  let sent = 0;
  let ok2xx = 0;
  let non2xx = 0;
  let lost = 0;
  let maxBacklog = 0;
  let lastDone = 0;
  let firstError: string | null = null;
  const statusCodes: Record<string, number> = {};
  const cpu0 = process.cpuUsage();
  const created = performance.now();
  let t0 = 0;

  return new Promise((resolve) => {
    const conns: OpenLoopConn[] = [];
    const idle = new Set<OpenLoopConn>();
    let timer: NodeJS.Timeout | undefined;
    let finished = false;

    const finish = (): void => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      for (const c of conns) c.close();
      const now = performance.now();
      const cpu = process.cpuUsage(cpu0);
      // Whatever was sent and is still unanswered now is lost.
      lost = sent - answered;
      resolve({
        scheduled: total,
        sent,
        ok2xx,
        non2xx,
        lost,
        statusCodes,
        firstError,
        latency: percentiles(latency.subarray(0, answered)),
        service: percentiles(service.subarray(0, answered)),
        wait: percentiles(wait.subarray(0, answered)),
        maxBacklog,
        seconds: ((lastDone > 0 ? lastDone : now) - (t0 || created)) / 1000,
        loaderCpuPercent: (100 * (cpu.user + cpu.system)) / 1000 / Math.max(1, now - created),
      });
    };

    /** Sends every request due by now over the idle connections, oldest first. */
    const pump = (now: number): void => {
      if (t0 === 0 || finished) return;
      const due = Math.min(total, Math.floor((now - t0) / intervalMs) + 1);
      maxBacklog = Math.max(maxBacklog, due - sent);
      for (const c of idle) {
        if (sent >= due) break;
        idle.delete(c);
        c.send(sent + 1, t0 + sent * intervalMs);
        sent++;
      }
      if (sent === total && answered + lost === total) finish();
    };

    const events: OpenLoopEvents = {
      answered(conn, status, dueAt, sentAt, now) {
        const i = answered++;
        latency[i] = now - dueAt;
        service[i] = now - sentAt;
        wait[i] = sentAt - dueAt;
        lastDone = now;
        statusCodes[status] = (statusCodes[status] ?? 0) + 1;
        if (status >= 200 && status < 300) ok2xx++;
        else non2xx++;
        idle.add(conn);
        pump(now);
      },
      lost(conn, message) {
        lost++;
        firstError ??= message;
        idle.delete(conn);
        if (sent === total && answered + lost === total) finish();
      },
      ready(conn) {
        if (!conn.busy) idle.add(conn);
        if (t0 === 0 && idle.size === conns.length && conns.length === n) start();
        else pump(performance.now());
      },
    };

    const start = (): void => {
      clearTimeout(timer);
      t0 = performance.now();
      const tick = (): void => {
        const now = performance.now();
        pump(now);
        for (const c of conns) c.checkTimeout(now, timeoutMs);
        timer = sent < total ? setTimeout(tick, 1) : setTimeout(finish, o.drainMs ?? 15_000);
      };
      tick();
    };

    const n = Math.max(1, Math.floor(o.connections));
    const req = requestParts(o);
    timer = setTimeout(() => {
      firstError = `not all ${n} connections up within ${CONNECT_MS} ms`;
      finish();
    }, CONNECT_MS);
    for (let i = 0; i < n; i++) conns.push(new OpenLoopConn(req, events));
  });
}
