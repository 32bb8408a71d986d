import type { IncomingHttpHeaders } from 'node:http';
import type { SignatureCandidate, SignatureGate, SignedBy } from '../auth/index.js';
import { RequestError } from '../common/errors.js';
import type { MappedHookCall, Payload } from '../hooks/index.js';
import { parseHookBody, parseJsonObject } from './parse-request-body.js';
import type { ObservedRequest } from './request-observer.js';

/** A hook request as the door takes it: plain values, the body exactly as received. */
interface HookRequest {
  /** The path after `hooks.path`. */
  name: string;
  headers: IncomingHttpHeaders;
  /** Path and query as received. */
  url: string;
  rawBody: Buffer;
  /**
   * Set when the request must be authenticated by its signature (the hook token was absent or
   * wrong): the mappings whose keys may verify it. Absent: the token vouched for it.
   */
  candidates: readonly SignatureCandidate[] | undefined;
  /** The moment signature timestamps are judged against: now, or when a relay received the request. */
  nowMs: number;
  /** The request log's view of the request, if it is recorded. */
  observed?: ObservedRequest | undefined;
}

/** What the door made of a request: a call for the hook handler, or Slack's challenge to answer. */
type HookDecision = { kind: 'call'; call: MappedHookCall } | { kind: 'challenge'; challenge: string };

/** Slack checks a new Events API URL with a signed `url_verification` request and expects its challenge back. */
function slackChallenge(signedBy: SignedBy | undefined, payload: Payload): string | undefined {
  if (signedBy === undefined || !signedBy.kinds.includes('slack')) return undefined;
  const challenge = payload['challenge'];
  return payload['type'] === 'url_verification' && typeof challenge === 'string' ? challenge : undefined;
}

/**
 * The door between the bytes and the hook handler, for a request read at the HTTP edge and for one a
 * relay held: the signature over the raw bytes when the token did not vouch for it (401
 * `signature_invalid`), then the JSON object (or a form, for mapped hooks) within its depth (400).
 * Only an authenticated body is noted for the request log.
 */
export function parseHookCall(signatures: SignatureGate, r: HookRequest): HookDecision {
  let signedBy: SignedBy | undefined;
  if (r.candidates !== undefined) {
    const verdict = signatures.verify(r.candidates, { headers: r.headers, rawBody: r.rawBody, nowMs: r.nowMs });
    if (!verdict.ok)
      throw new RequestError('signature_invalid', {
        message: `Missing or invalid request signature (${verdict.reason}).`,
      });
    signedBy = verdict.signedBy;
  }
  r.observed?.noteBody(r.rawBody, r.headers);
  // Forms are for mapped senders (Slack commands, Twilio); /wake and /agent take JSON only.
  const payload =
    r.name === 'wake' || r.name === 'agent'
      ? parseJsonObject(r.rawBody)
      : parseHookBody(r.rawBody, r.headers['content-type']);
  const challenge = slackChallenge(signedBy, payload);
  if (challenge !== undefined) return { kind: 'challenge', challenge };
  return {
    kind: 'call',
    call: {
      name: r.name,
      payload,
      headers: r.headers,
      url: r.url,
      ...(signedBy === undefined ? {} : { signedBy: { mappingIds: signedBy.mappingIds } }),
      ...(signedBy?.deliveryId === undefined ? {} : { deliveryId: signedBy.deliveryId }),
      ...(signedBy?.retryNum === undefined ? {} : { retryNum: signedBy.retryNum }),
      ...(r.observed === undefined ? {} : { requestId: r.observed.id }),
    },
  };
}
