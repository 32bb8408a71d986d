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

/**
 * Builds the action for `/wake`, `/agent` or a mapped name, applies policy, and records it: the
 * returned promise resolves only after the store has committed, so the caller may acknowledge.
 */
export function createHookHandler(deps: {
  policy: Policy;
  store: IngressStore;
  clock: Clock;
  /** User mappings, then presets. */
  mappings: readonly CompiledMapping[];
  runTransform: TransformRunner;
}): HookHandler {
  const { policy, store } = deps;
  const recordWake = async (request: WakeRequest, ingress: IngressStore): Promise<HookOutcome> => {
    const event = policy.resolveWake(request);
    await ingress.addSystemEvent(event);
    return { kind: 'wake', event };
  };
  const recordRun = async (request: AgentRequest, ingress: IngressStore): Promise<HookOutcome> => {
    const run = policy.resolveAgentRun(request);
    await ingress.enqueueRun(run);
    return { kind: 'agent', run };
  };
  return async (call, ingress = store) => {
    switch (call.name) {
      case 'wake': {
        const wake = parseWakePayload(call.payload);
        return recordWake({ text: wake.text, mode: wake.mode, source: WAKE_SOURCE }, ingress);
      }
      case 'agent':
        return recordRun({ ...parseAgentPayload(call.payload), sessionKeyOrigin: 'request', source: AGENT_SOURCE }, ingress);
      default: {
        const mapped = await buildMappedRequest(deps.mappings, deps.runTransform, call, deps.clock.now());
        switch (mapped.kind) {
          case 'wake':
            return recordWake(mapped.request, ingress);
          case 'agent':
            return recordRun(mapped.request, ingress);
          case 'skip':
            return { kind: 'skip' };
        }
      }
    }
  };
}
