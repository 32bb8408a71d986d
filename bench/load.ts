/** One autocannon run against `POST /hooks/wake`, each request with a distinct body. */
import autocannon from 'autocannon';

export interface LoadOptions {
  port: number;
  token: string;
  connections: number;
  seconds: number;
  /** Prefix of every request's `text`, so bodies are distinct across runs too. */
  label: string;
  /** `now` asks the gateway for a heartbeat turn per wake (coalesced); `next-heartbeat` does not. */
  mode: 'now' | 'next-heartbeat';
}

export interface LoadResult {
  /** Wall time autocannon measured, s. */
  seconds: number;
  /** 2xx responses per second (goodput). */
  rps: number;
  /** Latency percentiles in ms, from every response's own timing (autocannon's are whole ms). */
  p50: number;
  p99: number;
  ok2xx: number;
  non2xx: number;
  /** Socket errors, timeouts included. */
  errors: number;
  timeouts: number;
  /** Count per HTTP status. */
  statusCodes: Record<string, number>;
  /** The first request error message, if any. */
  firstError: string | null;
  /** CPU the load generator (this process) used, in % of one core: it shares the 2 cores. */
  loaderCpuPercent: number;
}

/** Nearest-rank percentile of an ascending array; NaN when empty. */
export function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))] ?? Number.NaN;
}

export function runLoad(o: LoadOptions): Promise<LoadResult> {
  let n = 0;
  const latencies: number[] = [];
  let firstError: string | null = null;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: `http://127.0.0.1:${o.port}/hooks/wake`,
        method: 'POST',
        connections: o.connections,
        duration: o.seconds,
        headers: { 'content-type': 'application/json', authorization: `Bearer ${o.token}` },
        // With one request that has a setupRequest, autocannon rebuilds it before every send.
        requests: [
          {
            setupRequest: (req) => ({ ...req, body: JSON.stringify({ text: `${o.label}-${++n}`, mode: o.mode }) }),
          },
        ],
      },
      (error: unknown, result) => {
        if (error !== null && error !== undefined) {
          reject(error instanceof Error ? error : new Error(String(error)));
          return;
        }
        const cpu = process.cpuUsage(cpu0);
        const wallMs = performance.now() - t0;
        const sorted = Float64Array.from(latencies).sort();
        const statusCodes: Record<string, number> = {};
        for (const [code, stat] of Object.entries(result.statusCodeStats ?? {})) statusCodes[code] = stat.count ?? 0;
        resolve({
          seconds: result.duration,
          rps: result['2xx'] / result.duration,
          p50: percentile(sorted, 0.5),
          p99: percentile(sorted, 0.99),
          ok2xx: result['2xx'],
          non2xx: result.non2xx,
          errors: result.errors,
          timeouts: result.timeouts,
          statusCodes,
          firstError,
          loaderCpuPercent: (100 * (cpu.user + cpu.system)) / 1000 / wallMs,
        });
      },
    );
    instance.on('response', (_client, _status, _bytes, responseTimeMs) => {
      latencies.push(responseTimeMs);
    });
    instance.on('reqError', (error: unknown) => {
      firstError ??= error instanceof Error ? error.message : String(error);
    });
  });
}
