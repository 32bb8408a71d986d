import type { Clock } from '../common/clock.js';
import { RequestError } from '../common/errors.js';
import { linkSignals } from '../common/link-signals.js';
import type { Log } from '../common/log.js';
import { repeatEvery } from '../common/repeat-every.js';
import { describeOutcome, resolveIdempotencyKey, type HookHandler, type Payload } from '../hooks/index.js';
import type { RequestObserver } from '../http/index.js';
import type { CatchUpClaim, CatchUpState, IngressStore } from '../store/index.js';
import type { CatchUpSource, CaughtUpRef, CaughtUpRequest } from './catch-up-source.js';

/**
 * How far before the last pass's end the next one reads again: a provider records an event a little
 * after it happened (a GitHub attempt that timed out is recorded when it gives up), so the record
 * of a moment can grow after it was read. What is read twice is recognised by its id.
 */
export const OVERLAP_MS = 5 * 60_000;

/** One mapping a pass catches up: where its events go, and its provider's record. */
export interface CatchUpTarget {
  mappingId: string;
  /** The hook name (the mapping's `match.path`) caught-up events are handled as. */
  hookName: string;
  source: CatchUpSource;
  /** Whether missed events are redelivered by the provider instead of handled here. */
  redeliver: boolean;
  maxEvents: number;
}

export interface CatchUpPassDeps {
  store: CatchUpState & Pick<IngressStore, 'findIdempotencyKey'>;
  /** The hook handler in force (a reload replaces it): the same door a delivered request goes through. */
  handleHook: HookHandler;
  hooksPath: () => string;
  /** The request log: a caught-up event is recorded as a request from `catch-up:<provider>`. */
  observer?: RequestObserver;
  /** How long idempotency keys are kept now (`hooks.idempotencyWindowSeconds`): no pass reads further back. */
  horizonMs: () => number;
  clock: Clock;
  log: Log;
  /** This process, for the lease's record. */
  owner: string;
  /** The pass's lease, renewed every third of it while it runs. @default 60000 */
  leaseMs?: number;
}

/** What a pass did. */
export interface CatchUpReport {
  mappingId: string;
  provider: 'github' | 'stripe';
  /** `busy`: another process holds the mapping's catch-up; `failed`: a call failed, `error` says which. */
  outcome: 'done' | 'busy' | 'failed';
  /** The window read (ms), when it was. */
  from: number | null;
  to: number | null;
  /** Events the provider recorded in the window. */
  listed: number;
  /** Of them, those that never reached the gateway. */
  missed: number;
  /** Of the missed, handled now: taken (a wake or a run), skipped by a transform, refused by the mapping (4xx). */
  accepted: number;
  skipped: number;
  refused: number;
  /** Of the missed, already here (their id recorded): not handled again. */
  duplicates: number;
  /** Of the missed, asked of the provider again (`redeliver`). */
  redelivered: number;
  /** More missed events than a pass handles: the next pass follows at once. */
  truncated: boolean;
  /** `since` reached before what the idempotency keys remember, and was brought forward to it. */
  clamped: boolean;
  error: string | null;
}

/** A pass asked for by an operator: from `sinceMs` instead of the saved position. */
export interface PassOptions {
  sinceMs?: number;
  signal?: AbortSignal;
}

const empty = (t: CatchUpTarget, outcome: CatchUpReport['outcome']): CatchUpReport => ({
  mappingId: t.mappingId,
  provider: t.source.provider,
  outcome,
  from: null,
  to: null,
  listed: 0,
  missed: 0,
  accepted: 0,
  skipped: 0,
  refused: 0,
  duplicates: 0,
  redelivered: 0,
  truncated: false,
  clamped: false,
  error: null,
});

/**
 * Handles one caught-up event through the mapping exactly as a delivered request: the hook handler
 * with the provider's headers and body, authenticated as its signature would have been (the API
 * token vouches for it) and carrying the provider's id, so its idempotency key is the one a delivery
 * gets. Recorded in the request log from the client `catch-up:<provider>`. A refusal (4xx) is the
 * mapping's answer and ends the event; any other failure rejects.
 */
async function throughTheDoor(
  deps: CatchUpPassDeps,
  t: CatchUpTarget,
  ref: CaughtUpRef,
  request: CaughtUpRequest,
): Promise<'accepted' | 'skipped' | 'refused' | 'duplicates'> {
  const path = `${deps.hooksPath()}/${t.hookName}`;
  const trace = deps.observer?.begin({
    method: 'POST',
    path,
    hook: t.hookName,
    client: `catch-up:${t.source.provider}`,
  });
  try {
    trace?.noteBody(Buffer.from(JSON.stringify(request.payload)), request.headers);
    const p = request.payload;
    if (p === null || typeof p !== 'object' || Array.isArray(p)) throw new RequestError('invalid_body');
    const outcome = await deps.handleHook(
      {
        name: t.hookName,
        payload: p as Payload,
        headers: request.headers,
        url: path,
        signedBy: { mappingIds: [t.mappingId] },
        deliveryId: ref.id,
      },
      trace?.ingress(),
    );
    trace?.end(describeOutcome(outcome).status);
    return outcome.kind === 'duplicate' ? 'duplicates' : outcome.kind === 'skip' ? 'skipped' : 'accepted';
  } catch (error) {
    trace?.noteError(error);
    trace?.end(error instanceof RequestError ? error.status : 500);
    if (error instanceof RequestError && error.status < 500) return 'refused';
    throw error;
  }
}

/**
 * One catch-up pass of a mapping, under its fleet-wide lease: the provider's record from the saved
 * position (less `OVERLAP_MS`; from `sinceMs` when asked, never before the idempotency horizon) to
 * now, each missed event handled oldest first, and the position saved: to now when every event was
 * handled, else to the event the pass stopped at. An event already here (its id's key recorded) is
 * passed over, so a window read twice handles nothing twice.
 */
export async function runCatchUpPass(
  deps: CatchUpPassDeps,
  t: CatchUpTarget,
  options: PassOptions = {},
): Promise<CatchUpReport> {
  const leaseMs = deps.leaseMs ?? 60_000;
  const claim = await deps.store.claimCatchUp({ mappingId: t.mappingId, owner: deps.owner, leaseMs });
  if (claim === null) return empty(t, 'busy');
  const lost = new AbortController();
  const done = new AbortController();
  const renewing = repeatEvery(deps.clock, Math.max(1, Math.floor(leaseMs / 3)), done.signal, async () => {
    if (!(await deps.store.renewCatchUp(claim, leaseMs).catch(() => false))) {
      lost.abort(new Error('the catch-up lease was lost'));
      done.abort();
    }
  });
  const linked = linkSignals(options.signal === undefined ? [lost.signal] : [lost.signal, options.signal]);
  const report = empty(t, 'done');
  try {
    await pass(deps, t, claim, options, linked.signal, report);
  } catch (error) {
    report.outcome = 'failed';
    report.error = (error as Error).message;
  } finally {
    linked.dispose();
    done.abort();
    await renewing;
    await deps.store.releaseCatchUp(claim).catch(() => undefined);
  }
  return report;
}

async function pass(
  deps: CatchUpPassDeps,
  t: CatchUpTarget,
  claim: CatchUpClaim,
  options: PassOptions,
  signal: AbortSignal,
  report: CatchUpReport,
): Promise<void> {
  const to = deps.clock.now();
  const horizon = to - deps.horizonMs();
  const wanted = options.sinceMs ?? (claim.cursorAt === null ? to : claim.cursorAt) - OVERLAP_MS;
  report.clamped = wanted < horizon;
  const from = Math.max(wanted, horizon);
  report.from = from;
  report.to = to;
  const listing = await t.source.list(from, t.maxEvents, signal, claim.resumeAfter);
  report.listed = listing.listed;
  report.missed = listing.refs.length;
  report.truncated = listing.truncated;
  /** Everything before this was handled; `null` while nothing was. */
  let handledTo: CaughtUpRef | null = null;
  let stoppedAt: CaughtUpRef | null = null;
  try {
    for (const ref of listing.refs) {
      signal.throwIfAborted();
      stoppedAt = ref;
      const key = resolveIdempotencyKey({
        name: t.hookName,
        payload: {},
        headers: {},
        url: '',
        deliveryId: ref.id,
      });
      if (key !== null && (await deps.store.findIdempotencyKey(t.hookName, key)) !== null) report.duplicates++;
      else if (t.redeliver && t.source.redeliver !== undefined) {
        await t.source.redeliver(ref, signal);
        report.redelivered++;
      } else {
        report[await throughTheDoor(deps, t, ref, await t.source.load(ref, signal))]++;
      }
      handledTo = ref;
      stoppedAt = null;
    }
  } finally {
    // Stopped short: the next pass reads again from the overlap before the event not handled. Cut
    // short by `maxEvents`: it resumes right after the last event handled (an old one: newer ones
    // are waiting), however many share its moment. Complete: it starts the overlap before now.
    const resumes = stoppedAt === null && listing.truncated && handledTo !== null;
    const cursorAt =
      stoppedAt !== null
        ? stoppedAt.at
        : resumes
          ? Math.max(claim.cursorAt ?? 0, handledTo!.at + OVERLAP_MS)
          : Math.max(claim.cursorAt ?? to, to);
    const saved = await deps.store.saveCatchUp(claim, {
      cursorAt,
      lastId: handledTo?.id ?? claim.lastId,
      resumeAfter: resumes ? handledTo!.id : stoppedAt === null ? null : claim.resumeAfter,
      at: deps.clock.now(),
    });
    if (!saved) deps.log.warn('catch-up position not saved: the lease was lost', { mappingId: t.mappingId });
  }
}
