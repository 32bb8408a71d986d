import type { Clock } from '../common/clock.js';
import type { Ids } from '../common/ids.js';
import { RequestError } from '../common/errors.js';
import { checkHookCall, idempotencyFingerprint, resolveIdempotencyKey, type CompiledMapping } from '../hooks/index.js';
import type { RelayDoor } from '../http/index.js';
import type { RelayQueue } from '../store/index.js';
import { keepRelayedHeaders } from './keep-relayed-headers.js';

interface RelayDoorDeps {
  store: Pick<RelayQueue, 'addRelayRequest'>;
  /** The mappings in force: which names exist, and which need a signature. */
  mappings: readonly CompiledMapping[];
  clock: Clock;
  ids: Ids;
  /** How long a request's key answers its repeats (`hooks.idempotencyWindowSeconds`). */
  idempotencyWindowSeconds: number;
  /** A new request was committed (leases waiting for one wake up). */
  onRelayed: () => void;
}

/**
 * A relay's door, after the HTTP edge's checks (token or signature, body, JSON): the call's mapping
 * and authentication as the home would judge them (404, 401, 400), its key, and the request as
 * received, committed before the answer `202 {"ok":true,"relayed":true,"id"}`. A repeat of a key
 * within its window gets the first request's answer and records nothing; a client's own key reused
 * with another body is 422 `idempotency_key_reused`. The id is the request
 * record's, so the relay's request log and queue name a request alike.
 */
export function createRelayDoor(deps: RelayDoorDeps): RelayDoor {
  return async (call, rawBody) => {
    checkHookCall(deps.mappings, call);
    const key = resolveIdempotencyKey(call);
    const now = deps.clock.now();
    const fingerprint = key === null ? null : idempotencyFingerprint(call);
    const added = await deps.store.addRelayRequest({
      id: call.requestId ?? deps.ids.next(),
      hook: call.name,
      url: call.url,
      headers: keepRelayedHeaders(call.headers),
      body: rawBody,
      auth: call.signedBy === undefined ? 'token' : 'signature',
      key,
      keyExpiresAt: key === null ? null : now + deps.idempotencyWindowSeconds * 1000,
      fingerprint,
      receivedAt: now,
    });
    // A client's key reused with another body is not a repeat (as at the door).
    if (added.duplicate && fingerprint !== null && added.fingerprint !== null && added.fingerprint !== fingerprint)
      throw new RequestError('idempotency_key_reused');
    if (!added.duplicate) deps.onRelayed();
    return { status: 202, body: JSON.stringify({ ok: true, relayed: true, id: added.id }) };
  };
}
