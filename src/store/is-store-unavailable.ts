/**
 * SQLite result codes (primary, and the extended ones that start with them) meaning the database
 * cannot take a write right now: another connection holds the lock, the disk is full or failing,
 * or the file became read-only. Retrying later can succeed; the request is not at fault.
 */
const SQLITE_PREFIXES = ['SQLITE_BUSY', 'SQLITE_LOCKED', 'SQLITE_FULL', 'SQLITE_IOERR', 'SQLITE_READONLY'];

/**
 * PostgreSQL SQLSTATEs of the same kind: class 08 (connection exception), 53xxx (insufficient
 * resources: disk full, out of memory, too many connections), 55P03 (a lock another session holds
 * was not granted within `lock_timeout`), 57P01–57P03 (the server is shutting down, crashed, or not
 * accepting connections yet).
 */
const PG_STATES = new Set(['53000', '53100', '53200', '53300', '55P03', '57P01', '57P02', '57P03']);

/** Socket-level failures a PostgreSQL client reports when the server cannot be reached. */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
]);

/**
 * Messages `pg` and `pg-pool` throw without a code when a connection is lost or cannot be had, or
 * when the server did not answer a statement within `query_timeout`.
 */
const PG_MESSAGES =
  /^(Connection terminated|Client has encountered a connection error|timeout exceeded when trying to connect|Client was closed and is not queryable|Query read timeout)/;

/** Hookgate's own: the store has not finished a write for too long (create-stall-watch.ts). */
const STORE_CODES = new Set(['HOOKGATE_STORE_STALLED']);

function isUnavailableCode(code: string): boolean {
  return (
    STORE_CODES.has(code) ||
    SQLITE_PREFIXES.some((p) => code === p || code.startsWith(`${p}_`)) ||
    PG_STATES.has(code) ||
    (code.length === 5 && code.startsWith('08')) ||
    NETWORK_CODES.has(code)
  );
}

/**
 * True when a store operation failed because the store cannot write at the moment (locked, full,
 * read-only, disconnected), as opposed to a bug or a bad value. The ingress answers such failures
 * 503 `store_unavailable` with `Retry-After` instead of 500. Looks through `cause` chains.
 */
export function isStoreUnavailable(error: unknown): boolean {
  let e: unknown = error;
  for (let i = 0; i < 5 && e !== null && typeof e === 'object'; i++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && isUnavailableCode(code)) return true;
    const message = (e as { message?: unknown }).message;
    if (typeof message === 'string' && PG_MESSAGES.test(message)) return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}
