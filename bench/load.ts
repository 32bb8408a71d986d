/**
 * One timed load run against `POST /hooks/wake`, each request with a distinct body, by the lean
 * `node:net` loader (default) or autocannon (`BENCH_LOADER=autocannon`).
 */
import { runAutocannon } from './autocannon-load.js';
import { runLeanLoad } from './lean-load.js';
import type { LoadResult } from './load-result.js';
import { sampleProcess, type ProcessSample } from './proc.js';

export { percentile, type LoadResult } from './load-result.js';

export type Loader = 'lean' | 'autocannon';

export interface LoadOptions {
  loader: Loader;
  port: number;
  token: string;
  connections: number;
  seconds: number;
  /** Prefix of every request's `text`, so bodies are distinct across runs too. */
  label: string;
  /** `now` asks the gateway for a heartbeat turn per wake (coalesced); `next-heartbeat` does not. */
  mode: 'now' | 'next-heartbeat';
}

export function runLoad(o: LoadOptions): Promise<LoadResult> {
  const common = { port: o.port, token: o.token, path: '/hooks/wake', connections: o.connections, seconds: o.seconds };
  // The label is a hex run id plus a key, so it needs no JSON escaping.
  if (o.loader === 'lean') {
    return runLeanLoad({ ...common, bodyPrefix: `{"text":"${o.label}-`, bodySuffix: `","mode":"${o.mode}"}` });
  }
  return runAutocannon({ ...common, body: (n) => JSON.stringify({ text: `${o.label}-${n}`, mode: o.mode }) });
}

/** One load run with the server's RSS and CPU sampled meanwhile (`pid`: the server process). */
export async function runSampledLoad(
  pid: number,
  o: LoadOptions,
): Promise<{ result: LoadResult; sample: ProcessSample }> {
  const sampler = sampleProcess(pid);
  let result: LoadResult;
  try {
    result = await runLoad(o);
  } catch (error) {
    sampler.stop(); // its interval would keep the process alive
    throw error;
  }
  return { result, sample: sampler.stop() };
}
