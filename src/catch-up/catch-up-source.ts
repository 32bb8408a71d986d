import type { IncomingHttpHeaders } from 'node:http';

/** One event in a provider's record, as a pass's listing keeps it until it is handled. */
export interface CaughtUpRef {
  /** The provider's id of the event: a delivery's GUID, a Stripe event's id (the idempotency identity). */
  id: string;
  /** When the provider recorded it (ms, the provider's clock): the order events are handled in. */
  at: number;
}

/** An event as it would have reached the hook: its headers and its JSON body. */
export interface CaughtUpRequest {
  headers: IncomingHttpHeaders;
  payload: unknown;
}

/** What a listing found in its window, oldest first. */
interface CaughtUpListing<R extends CaughtUpRef> {
  refs: R[];
  /** Events listed in all (every attempt of a GitHub delivery counted once). */
  listed: number;
  /** More events of the window than the pass handles (`maxEvents`): the newest wait for the next pass. */
  truncated: boolean;
}

/** A provider's record of what it sent, read through its API. */
export interface CatchUpSource<R extends CaughtUpRef = CaughtUpRef> {
  readonly provider: 'github' | 'stripe';
  /**
   * The events recorded from `fromMs` on that never reached the gateway, oldest first, at most
   * `maxEvents` (the oldest of them); with `after` (a pass cut short resumes), only those listed
   * after that event.
   */
  list(fromMs: number, maxEvents: number, signal: AbortSignal, after?: string | null): Promise<CaughtUpListing<R>>;
  /** The event's request, to be handled here. */
  load(ref: R, signal: AbortSignal): Promise<CaughtUpRequest>;
  /** Asks the provider to send the event again, instead of handling it here (GitHub's `redeliver`). */
  redeliver?(ref: R, signal: AbortSignal): Promise<void>;
}

/** A provider call that failed: its status and the provider's own words, never the credential. */
export class CatchUpError extends Error {
  constructor(
    message: string,
    readonly status: number | null = null,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'CatchUpError';
  }
}

/**
 * The oldest `max` of refs listed newest first, oldest first: a storm longer than one pass handles is
 * taken from its start, and its end waits for the next pass. Events of one moment keep the order the
 * provider listed them in (Stripe's `created` is in whole seconds), so `after` (the last event a pass
 * cut short handled) leaves out exactly what that pass handled of its moment.
 */
export function keepOldest<R extends CaughtUpRef>(
  newestFirst: readonly R[],
  max: number,
  after: string | null = null,
): { kept: R[]; truncated: boolean } {
  // Reversed, then a stable sort: ties stay in the provider's order.
  let sorted = [...newestFirst].reverse().sort((a, b) => a.at - b.at);
  const resume = after === null ? -1 : sorted.findIndex((r) => r.id === after);
  if (resume !== -1) sorted = sorted.slice(resume + 1);
  return sorted.length <= max ? { kept: sorted, truncated: false } : { kept: sorted.slice(0, max), truncated: true };
}
