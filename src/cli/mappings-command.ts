import { systemClock } from '../common/clock.js';
import { createIds } from '../common/ids.js';
import { RequestError } from '../common/errors.js';
import { createSecretScrubber } from '../common/scrub-secrets.js';
import { listConfigSecrets } from '../config/index.js';
import {
  buildHookAction,
  describeOutcome,
  compileMappings,
  createTransformRunner,
  type Payload,
} from '../hooks/index.js';
import { createPolicy } from '../policy/index.js';
import { EXIT_FAILURE, EXIT_OK, EXIT_USAGE, type CliDeps } from './cli-deps.js';
import { loadOrReport } from './load-or-report.js';
import { readPayload } from './read-payload.js';
import { jsonOutput } from './format.js';

/**
 * `hookgate mappings test HOOK`: builds the action exactly as the gateway would (match,
 * templates, transform, policy) and prints it as JSON; nothing is stored, no model is called.
 */
export async function mappingsTestCommand(
  configPath: string,
  hook: string,
  options: { data?: string | undefined; file?: string | undefined },
  deps: CliDeps,
): Promise<number> {
  const payload = readPayload(options);
  if (payload.kind === 'unusable') {
    deps.stderr(`hookgate mappings test: ${payload.message}\n`);
    return EXIT_USAGE;
  }
  if (payload.kind === 'too_deep') {
    printRefusal(new RequestError('json_too_deep'), deps);
    return EXIT_FAILURE;
  }
  if (payload.value === null || typeof payload.value !== 'object' || Array.isArray(payload.value)) {
    deps.stderr('hookgate mappings test: the payload must be a JSON object (the gateway answers 400 invalid_body)\n');
    return EXIT_FAILURE;
  }
  const loaded = loadOrReport(configPath, deps);
  if (loaded === null) return EXIT_FAILURE;
  const clock = systemClock;
  // As the gateway runs it: what a transform returns is scrubbed of the config's secrets.
  const runTransform = createTransformRunner(loaded.transformsDir, {
    scrub: createSecretScrubber(listConfigSecrets(loaded.config)),
  });
  const name = hook.replace(/^\/+/, '');
  try {
    const outcome = await buildHookAction(
      {
        policy: createPolicy({ config: loaded.config, ids: createIds(clock.now), clock }),
        clock,
        mappings: compileMappings(loaded.config.hooks, loaded.transformsDir),
        runTransform,
      },
      {
        name,
        payload: payload.value as Payload,
        headers: { 'content-type': 'application/json' },
        url: `${loaded.config.hooks.path}/${name}`,
      },
    );
    const status = describeOutcome(outcome).status;
    const actionOf = (o: typeof outcome): unknown => (o.kind === 'wake' ? o.event : o.kind === 'agent' ? o.run : null);
    const action = outcome.kind === 'many' ? outcome.items.map((i) => actionOf(i.outcome)) : actionOf(outcome);
    deps.stdout(jsonOutput({ status, kind: outcome.kind, action }));
    return EXIT_OK;
  } catch (error) {
    if (!(error instanceof RequestError)) throw error;
    printRefusal(error, deps);
    return EXIT_FAILURE;
  } finally {
    await runTransform.close();
  }
}

/** Prints the gateway's answer to the payload as `{status, code, error}` (and `issues`). */
function printRefusal(error: RequestError, deps: CliDeps): void {
  const refusal: Record<string, unknown> = { status: error.status, code: error.code, error: error.message };
  if (error.issues !== undefined) refusal['issues'] = error.issues;
  // Unlike the gateway's answer, the operator sees why a transform failed.
  if (error.code === 'transform_failed' && error.cause instanceof Error) refusal['cause'] = error.cause.message;
  deps.stdout(jsonOutput(refusal));
}
