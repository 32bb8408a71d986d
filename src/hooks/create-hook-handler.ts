import { RequestError } from '../common/errors.js';
import type { Policy } from '../policy/index.js';
import type { ActionSource, NewRun, NewSystemEvent, Store } from '../store/index.js';
import { parseAgentPayload } from './parse-agent-payload.js';
import { parseWakePayload } from './parse-wake-payload.js';
import type { Payload } from './read-fields.js';

/** What a hook request turned into, once durably recorded. */
export type HookOutcome =
  | { kind: 'wake'; event: NewSystemEvent }
  | { kind: 'agent'; run: NewRun }
  | { kind: 'skip' };

/** Handles the hook named `name` (the path segment after `hooks.path`) for a parsed JSON object. */
export type HookHandler = (name: string, payload: Payload) => Promise<HookOutcome>;

const source = (hook: string): ActionSource => ({ hook, external: true, allowUnsafeExternalContent: false });
const WAKE_SOURCE = source('wake');
const AGENT_SOURCE = source('agent');

/**
 * Builds the action for `/wake` and `/agent`, applies policy, and records it: the returned promise
 * resolves only after the store has committed, so the caller may acknowledge.
 */
export function createHookHandler(deps: {
  policy: Policy;
  store: Store;
  /** Called once an outcome is committed (the runtime starts work from here). */
  onRecorded?: (outcome: HookOutcome) => void;
}): HookHandler {
  const { policy, store } = deps;
  const recorded = (outcome: HookOutcome): HookOutcome => {
    deps.onRecorded?.(outcome);
    return outcome;
  };
  return async (name, payload) => {
    switch (name) {
      case 'wake': {
        const wake = parseWakePayload(payload);
        const event = policy.resolveWake({ text: wake.text, mode: wake.mode, source: WAKE_SOURCE });
        await store.addSystemEvent(event);
        return recorded({ kind: 'wake', event });
      }
      case 'agent': {
        const p = parseAgentPayload(payload);
        const run = policy.resolveAgentRun({ ...p, sessionKeyOrigin: 'request', source: AGENT_SOURCE });
        await store.enqueueRun(run);
        return recorded({ kind: 'agent', run });
      }
      default:
        throw new RequestError('hook_not_found', { message: `No hook mapping matches "${name}".` });
    }
  };
}
