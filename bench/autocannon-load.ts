/** One autocannon run against `POST <path>`, each request with a distinct body (`BENCH_LOADER=autocannon`). */
import autocannon from 'autocannon';
import { percentile, type LoadResult } from './load-result.js';

export interface AutocannonOptions {
  port: number;
  token: string;
  path: string;
  connections: number;
  seconds: number;
  /** Body of request n (n = 1, 2, …). */
  body: (n: number) => string;
}

export function runAutocannon(o: AutocannonOptions): Promise<LoadResult> {
  let n = 0;
  const latencies: number[] = [];
  let firstError: string | null = null;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: `http://127.0.0.1:${o.port}${o.path}`,
        method: 'POST',
        connections: o.connections,
        duration: o.seconds,
        headers: { 'content-type': 'application/json', authorization: `Bearer ${o.token}` },
        // With one request that has a setupRequest, autocannon rebuilds it before every send.
        requests: [{ setupRequest: (req) => ({ ...req, body: o.body(++n) }) }],
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
