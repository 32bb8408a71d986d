import type { Issue } from '../common/errors.js';
import { checkBind, type BindCheckDeps, type LoadedConfig } from '../config/index.js';
import { compileMappings, createTransformRunner } from '../hooks/index.js';

/** Time a transform module may take to load in the check. */
const PROBE_TIMEOUT_MS = 10_000;

/**
 * The checks that need the machine rather than the file: the bind address resolves to one of
 * ours, and every mapping's transform loads and exports the function it would call. `check`,
 * `serve` and a reload all run them, so `check` refuses what `serve` would.
 */
export async function preflightConfig(loaded: LoadedConfig, deps: BindCheckDeps = {}): Promise<Issue[]> {
  const issues = await checkBind(loaded.config.gateway.bind, deps);
  const withTransform = compileMappings(loaded.config.hooks, loaded.transformsDir)
    .map((m, i) => ({ m, i }))
    .filter(({ m }) => m.transform !== undefined);
  if (withTransform.length === 0) return issues;
  // A worker of its own: the module's top level runs there, never in the gateway's thread.
  const runner = createTransformRunner(loaded.transformsDir);
  try {
    for (const { m, i } of withTransform) {
      const path = `hooks.mappings[${i}].transform`;
      try {
        const problem = await runner.probe({ ...m.transform!, timeoutMs: PROBE_TIMEOUT_MS });
        if (problem !== null)
          issues.push({
            path: `${path}.${m.mapping.transform?.export === undefined ? 'module' : 'export'}`,
            message: problem,
          });
      } catch (error) {
        issues.push({ path: `${path}.module`, message: (error as Error).message });
      }
    }
  } finally {
    await runner.close();
  }
  return issues;
}
