import type { Clock } from '../common/clock.js';
import type { AgentRequest, Policy, WakeRequest } from '../policy/index.js';
import type { ActionSource, IngressStore, NewRun, NewSystemEvent } from '../store/index.js';
import { parseAgentPayload } from './parse-agent-payload.js';
import { parseWakePayload } from './parse-wake-payload.js';
import { buildMappedRequest, type MappedHookCall } from './mappings/build-mapped-request.js';
import type { CompiledMapping } from './mappings/compile-mappings.js';
import type { TransformRunner } from './transforms/create-transform-runner.js';

/** What a hook request turned into, once durably recorded. */
export type HookOutcome =
  | { kind: 'wake'; event: NewSystemEvent }
  | { kind: 'agent'; run: NewRun }
  | { kind: 'skip' };

/**
 * Handles a hook call: `name` is the path after `hooks.path`, `payload` the parsed JSON object.
 * `ingress` replaces the store for this call (the request log's, or a dry run's that keeps nothing).
 */
export type HookHandler = (call: MappedHookCall, ingress?: IngressStore) => Promise<HookOutcome>;

const source = (hook: string): ActionSource => ({ hook, external: true, allowUnsafeExternalContent: false });
const WAKE_SOURCE = source('wake');
const AGENT_SOURCE = source('agent');

/** What building an action needs: everything but the store. */
export interface HookActionDeps {
  policy: Policy;
  clock: Clock;
  /** User mappings, then presets. */
  mappings: readonly CompiledMapping[];
  runTransform: TransformRunner;
}

/**
 * Builds the action a hook call stands for, policy applied and every default filled, without
 * recording it: the gateway records what this returns; `hookgate mappings test` only prints it.
 */
export async function buildHookAction(deps: HookActionDeps, call: MappedHookCall): Promise<HookOutcome> {
  const { policy } = deps;
  const wake = (request: WakeRequest): HookOutcome => ({ kind: 'wake', event: policy.resolveWake(request) });
  const run = (request: AgentRequest): HookOutcome => ({ kind: 'agent', run: policy.resolveAgentRun(request) });
  switch (call.name) {
    case 'wake': {
      const payload = parseWakePayload(call.payload);
      return wake({ text: payload.text, mode: payload.mode, source: WAKE_SOURCE });
    }
    case 'agent':
      return run({ ...parseAgentPayload(call.payload), sessionKeyOrigin: 'request', source: AGENT_SOURCE });
    default: {
      const mapped = await buildMappedRequest(deps.mappings, deps.runTransform, call, deps.clock.now());
      switch (mapped.kind) {
        case 'wake':
          return wake(mapped.request);
        case 'agent':
          return run(mapped.request);
        case 'skip':
          return { kind: 'skip' };
      }
    }
  }
}

/**
 * Builds the action for `/wake`, `/agent` or a mapped name, applies policy, and records it: the
 * returned promise resolves only after the store has committed, so the caller may acknowledge.
 */
export function createHookHandler(deps: HookActionDeps & { store: IngressStore }): HookHandler {
  const { store } = deps;
  return async (call, ingress = store) => {
    const outcome = await buildHookAction(deps, call);
    if (outcome.kind === 'wake') await ingress.addSystemEvent(outcome.event);
    else if (outcome.kind === 'agent') await ingress.enqueueRun(outcome.run);
    return outcome;
  };
}
