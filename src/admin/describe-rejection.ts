import { ERROR_CATALOG, RequestError } from '../common/errors.js';
import { isStoreUnavailable } from '../store/index.js';

/** Bound on a reason, so one odd error cannot bloat the request log. */
const MAX_REASON_CHARS = 1_000;

const clip = (text: string): string =>
  text.length > MAX_REASON_CHARS ? `${text.slice(0, MAX_REASON_CHARS - 1)}…` : text;

const causeOf = (error: Error): string | null => (error.cause instanceof Error ? error.cause.message : null);

/**
 * The code and reason a request record keeps for a rejection. Operators read it behind the gateway
 * token, so it goes one step past the public answer: the offending fields, and for a 5xx the
 * underlying error's message (never a stack).
 */
export function describeRejection(error: unknown): { code: string; reason: string } {
  if (error instanceof RequestError) {
    let reason = error.message;
    // A message of its own already says what was wrong; the catalog's generic one gets the fields.
    if (error.issues !== undefined && error.issues.length > 0 && error.message === ERROR_CATALOG[error.code].message) {
      reason += ` ${error.issues.map((i) => `${i.path === '' ? '(body)' : i.path}: ${i.message}`).join('; ')}`;
    }
    const cause = error.status >= 500 ? causeOf(error) : null;
    if (cause !== null) reason += ` (${cause})`;
    return { code: error.code, reason: clip(reason) };
  }
  if (isStoreUnavailable(error)) {
    return {
      code: 'store_unavailable',
      reason: clip(`${ERROR_CATALOG.store_unavailable.message} (${(error as Error).message})`),
    };
  }
  return { code: 'internal_error', reason: clip(error instanceof Error ? error.message : String(error)) };
}
