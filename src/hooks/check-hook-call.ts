import { RequestError } from '../common/errors.js';
import { resolveMapping, type MappedHookCall } from './mappings/build-mapped-request.js';
import type { CompiledMapping } from './mappings/compile-mappings.js';
import { parseAgentPayload } from './parse-agent-payload.js';
import { parseWakePayload } from './parse-wake-payload.js';

/** The built-in endpoints know only the hook token: a signed call to them is refused. */
export function checkBuiltinAuthentication(call: MappedHookCall): void {
  if (call.signedBy !== undefined && (call.name === 'wake' || call.name === 'agent'))
    throw new RequestError('signature_invalid', { message: 'The built-in endpoints accept only the hook token.' });
}

/**
 * What can be told of a call without building its action (no template, no transform, no policy):
 * a `/wake` or `/agent` payload's shape (400), a mapped name's mapping (404) and the call's
 * authentication for it (401). A relay answers this far; its home builds the action.
 */
export function checkHookCall(mappings: readonly CompiledMapping[], call: MappedHookCall): void {
  checkBuiltinAuthentication(call);
  if (call.name === 'wake') parseWakePayload(call.payload);
  else if (call.name === 'agent') parseAgentPayload(call.payload);
  else resolveMapping(mappings, call);
}
