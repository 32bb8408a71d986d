import { RequestError } from '../common/errors.js';
import { textExceedsJsonDepth } from '../common/json-depth.js';
import { describeOutcome, type HookHandler, type HookOutcome, type Payload } from '../hooks/index.js';
import type { IngressStore, RequestRecord } from '../store/index.js';
import type { RequestRecorder } from './create-request-recorder.js';

/** A store for dry runs: the action is built through the real mapping and policy code, and kept nowhere. */
const DRY_RUN_STORE: IngressStore = {
  addSystemEvent: async () => undefined,
  enqueueRun: async () => undefined,
  recordActions: async () => ({ skippedItems: [], coalesced: {} }),
  findIdempotencyKey: async () => null,
};

/** Statuses answered before a body was read and authenticated: the gateway keeps no body of those. */
const REFUSED_BEFORE_BODY = new Set([401, 405, 408, 413, 429, 431, 503]);

/** Why a record cannot be replayed, in words an operator can act on. */
function notReplayable(record: RequestRecord): RequestError | null {
  if (record.hook === null)
    return new RequestError('payload_not_recorded', {
      message: 'This request was not sent to a hook; there is nothing to replay.',
    });
  if (record.payload !== null) return null;
  if (REFUSED_BEFORE_BODY.has(record.status))
    return new RequestError('payload_not_recorded', {
      message: `This request was refused (${record.status}) before its body was read and authenticated; the gateway keeps no body of such a request.`,
    });
  return new RequestError('payload_not_recorded');
}

interface ReplayOptions {
  /** Returns the action it would build and stores nothing. */
  dryRun: boolean;
  /** Records a real replay in the request log (`REPLAY`, naming the record it replays). */
  recorder?: RequestRecorder | undefined;
  /** Where the operator asking for it is (the request log's `client`). */
  client: string;
}

/**
 * Replays a recorded request: its body, and its headers when they were kept with it, through the
 * hook it was sent to, as the gateway is configured now. The operator's gateway token
 * authenticates it: a mapping with `verify.required` serves it without a signature, and it is a
 * new request, not an idempotent repeat of the original. `dryRun` returns the action it would
 * build and stores nothing.
 */
export async function replayRequest(
  handleHook: HookHandler,
  record: RequestRecord,
  hooksPath: string,
  options: ReplayOptions,
): Promise<HookOutcome> {
  const refused = notReplayable(record);
  if (refused !== null) throw refused;
  const hook = record.hook!;
  const raw = Buffer.from(record.payload!);
  // A refused request's body is recorded too: one nested too deep is refused here as it was at the door.
  if (textExceedsJsonDepth(raw)) throw new RequestError('json_too_deep');
  let payload: unknown;
  try {
    payload = JSON.parse(record.payload!);
  } catch {
    throw new RequestError('invalid_json', {
      message: 'The recorded payload is not valid JSON; it cannot be replayed.',
    });
  }
  if (payload === null || typeof payload !== 'object' || Array.isArray(payload)) throw new RequestError('invalid_body');
  const path = `${hooksPath}/${hook}`;
  const headers = record.headers ?? {};
  const call = { name: hook, payload: payload as Payload, headers, url: path, replay: true as const };
  if (options.dryRun) return handleHook(call, DRY_RUN_STORE);
  const trace = options.recorder?.beginReplay(record, path, options.client);
  trace?.noteBody(raw, headers);
  try {
    const outcome = await handleHook(call, trace?.ingress());
    trace?.end(describeOutcome(outcome).status);
    return outcome;
  } catch (error) {
    trace?.noteError(error);
    trace?.end(error instanceof RequestError ? error.status : 500);
    throw error;
  }
}
