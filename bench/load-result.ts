/** What one load run measured, whichever loader ran it. */
export interface LoadResult {
  /** Wall time of the run, s. */
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
