import type { IdempotencyRecord } from './types.js';

/**
 * The answers a request's idempotency records keep once some of its runs joined queued runs
 * (`coalesced`: a run's id to the id of the run it joined): the body of each record that has one
 * for that case. None when no run joined.
 */
export function joinedAnswers(
  claimed: readonly IdempotencyRecord[],
  coalesced: Readonly<Record<string, string>>,
): Array<{ hook: string; key: string; body: string }> {
  if (Object.keys(coalesced).length === 0) return [];
  return claimed.flatMap((k) =>
    k.answerJoined === undefined ? [] : [{ hook: k.hook, key: k.key, body: k.answerJoined(coalesced) }],
  );
}
