import { RequestError } from '../common/errors.js';
import { describeOutcome } from '../hooks/index.js';
import { parseHookCall, type IngressSettings, type RequestObserver } from '../http/index.js';
import type { LeasedRelayRequest, RelayRefusal } from '../store/index.js';

/** What a home made of one relayed request. */
export type RelayedResult =
  /** Committed here (`accepted`), already committed before (`duplicate`), or skipped by a transform: acknowledged. */
  | { kind: 'done'; id: string; outcome: 'accepted' | 'duplicate' | 'skipped'; committedAt: number }
  /** Refused by this door (4xx): acknowledged as a refusal, which the relay keeps as a dead letter. */
  | ({ kind: 'refused' } & RelayRefusal)
  /** This gateway failed (5xx, its store): not acknowledged, so the relay offers it again after the lease. */
  | { kind: 'failed'; id: string; error: unknown };

interface PassRelayedDeps {
  /** The ingress in force (a reload replaces it): this gateway's own mappings, keys and hook handler. */
  settings: () => IngressSettings;
  /** The request log: a relayed request is recorded as one from `relay:<host>`. */
  observer?: RequestObserver | undefined;
  /** The relay's host, for the request log's client. */
  relayHost: string;
  now: () => number;
}

const pathOf = (url: string): string => {
  const q = url.indexOf('?');
  return q === -1 ? url : url.slice(0, q);
};

/**
 * One relayed request through this gateway's own door, as if its sender had posted it here: the
 * body cap, the signature verified again over the original headers and bytes with this gateway's
 * keys (judged at the moment the relay received it, so a backlog does not age out of a timestamp
 * tolerance), its own mappings and policy, and its own idempotency ledger, keyed by the request's
 * own key or, without one, by the relay's id. A request the relay took by its hook token is taken as
 * such: the relay token is what this gateway trusts the relay with.
 */
export async function passRelayedRequest(deps: PassRelayedDeps, r: LeasedRelayRequest): Promise<RelayedResult> {
  const settings = deps.settings();
  const trace = deps.observer?.begin({
    method: 'POST',
    path: pathOf(r.url),
    hook: r.hook,
    client: `relay:${deps.relayHost}`,
  });
  try {
    if (r.body.length > settings.hooks.maxBodyBytes) throw new RequestError('payload_too_large');
    let candidates: ReturnType<IngressSettings['signatures']['candidatesFor']> | undefined;
    if (r.auth === 'signature') {
      candidates = settings.signatures.candidatesFor(r.hook);
      if (candidates.length === 0)
        throw new RequestError('signature_invalid', {
          message: `The relay took "${r.hook}" by its signature, and no mapping here verifies one for it.`,
        });
    }
    const door = parseHookCall(settings.signatures, {
      name: r.hook,
      headers: r.headers,
      url: r.url,
      rawBody: r.body,
      candidates,
      nowMs: r.receivedAt,
      observed: trace,
    });
    if (door.kind === 'challenge') {
      trace?.end(200);
      return { kind: 'done', id: r.id, outcome: 'skipped', committedAt: deps.now() };
    }
    const outcome = await settings.handleHook({ ...door.call, relayId: r.id }, trace?.ingress());
    trace?.end(describeOutcome(outcome).status);
    const committedAt = deps.now();
    const kind = outcome.kind === 'duplicate' ? 'duplicate' : outcome.kind === 'skip' ? 'skipped' : 'accepted';
    return { kind: 'done', id: r.id, outcome: kind, committedAt };
  } catch (error) {
    trace?.noteError(error);
    if (error instanceof RequestError && error.status < 500) {
      trace?.end(error.status);
      return { kind: 'refused', id: r.id, status: error.status, code: error.code, reason: error.message };
    }
    trace?.end(error instanceof RequestError ? error.status : 500);
    return { kind: 'failed', id: r.id, error };
  }
}
