import { RequestError } from '../common/errors.js';
import { textExceedsJsonDepth } from '../common/json-depth.js';
import type { HookHandler, HookOutcome, Payload } from '../hooks/index.js';
import type { IngressStore, RequestRecord } from '../store/index.js';

/** A store for dry runs: the action is built through the real mapping and policy code, and kept nowhere. */
const DRY_RUN_STORE: IngressStore = {
  addSystemEvent: async () => undefined,
  enqueueRun: async () => undefined,
  recordActions: async () => ({ skippedItems: [], coalesced: {} }),
  findIdempotencyKey: async () => null,
};

/**
 * Replays a recorded request: its body through the hook it was sent to, as the gateway is
 * configured now. `dryRun` returns the action it would build and stores nothing. Headers are not
 * recorded, so the replay carries none (a mapping that reads them sees them missing).
 */
export async function replayRequest(
  handleHook: HookHandler,
  record: RequestRecord,
  hooksPath: string,
  dryRun: boolean,
): Promise<HookOutcome> {
  if (record.payload === null || record.hook === null) throw new RequestError('payload_not_recorded');
  // A refused request's body is recorded too: one nested too deep is refused here as it was at the door.
  if (textExceedsJsonDepth(Buffer.from(record.payload))) throw new RequestError('json_too_deep');
  let payload: unknown;
  try {
    payload = JSON.parse(record.payload);
  } catch {
    throw new RequestError('invalid_json', {
      message: 'The recorded payload is not valid JSON; it cannot be replayed.',
    });
  }
  if (payload === null || typeof payload !== 'object' || Array.isArray(payload)) throw new RequestError('invalid_body');
  const call = { name: record.hook, payload: payload as Payload, headers: {}, url: `${hooksPath}/${record.hook}` };
  return dryRun ? handleHook(call, DRY_RUN_STORE) : handleHook(call);
}
