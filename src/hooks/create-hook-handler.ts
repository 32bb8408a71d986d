import type { Clock } from '../common/clock.js';
import { RequestError } from '../common/errors.js';
import type { AgentRequest, Policy, WakeRequest } from '../policy/index.js';
import type { ActionSource, NewRun, NewSystemEvent, Store } from '../store/index.js';
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

/** Handles a hook call: `name` is the path after `hooks.path`, `payload` the parsed JSON object. */
export type HookHandler = (call: MappedHookCall) => Promise<HookOutcome>;

const source = (hook: string): ActionSource => ({ hook, external: true, allowUnsafeExternalContent: false });
const WAKE_SOURCE = source('wake');
const AGENT_SOURCE = source('agent');

/**
 * Builds the action for `/wake`, `/agent` or a mapped name, applies policy, and records it: the
 * returned promise resolves only after the store has committed, so the caller may acknowledge.
 */
export function createHookHandler(deps: {
  policy: Policy;
  store: Store;
  clock: Clock;
  /** User mappings, then presets. */
  mappings: readonly CompiledMapping[];
  runTransform: TransformRunner;
  /** Called once an outcome is committed (the runtime starts work from here). */
  onRecorded?: (outcome: HookOutcome) => void;
}): HookHandler {
  const { policy, store } = deps;
  const recorded = (outcome: HookOutcome): HookOutcome => {
    deps.onRecorded?.(outcome);
    return outcome;
  };
  const recordWake = async (request: WakeRequest): Promise<HookOutcome> => {
    const event = policy.resolveWake(request);
    await store.addSystemEvent(event);
    return recorded({ kind: 'wake', event });
  };
  const recordRun = async (request: AgentRequest): Promise<HookOutcome> => {
    const run = policy.resolveAgentRun(request);
    await store.enqueueRun(run);
    return recorded({ kind: 'agent', run });
  };
  return async (call) => {
    if (call.signedBy !== undefined && (call.name === 'wake' || call.name === 'agent')) {
      // The built-in endpoints know only the hook token.
      throw new RequestError('signature_invalid', { message: 'The built-in endpoints accept only the hook token.' });
    }
    switch (call.name) {
      case 'wake': {
        const wake = parseWakePayload(call.payload);
        return recordWake({ text: wake.text, mode: wake.mode, source: WAKE_SOURCE });
      }
      case 'agent':
        return recordRun({ ...parseAgentPayload(call.payload), sessionKeyOrigin: 'request', source: AGENT_SOURCE });
      default: {
        const mapped = await buildMappedRequest(deps.mappings, deps.runTransform, call, deps.clock.now());
        switch (mapped.kind) {
          case 'wake':
            return recordWake(mapped.request);
          case 'agent':
            return recordRun(mapped.request);
          case 'skip':
            return { kind: 'skip' };
        }
      }
    }
  };
}
