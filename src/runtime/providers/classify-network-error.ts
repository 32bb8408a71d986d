/**
 * What kind of failure a request to a model API met before any HTTP answer: the retry policy
 * treats each kind differently (fail fast on what will not heal).
 * - `dns`: the host name does not resolve (a typo, a dead domain): a couple of quick tries.
 * - `refused`: nothing listens, or the host is unreachable: a few quick tries.
 * - `tls`: certificate or protocol failure (expired, self-signed, HTTP spoken to an HTTPS URL):
 *   never heals by retrying.
 * - `config`: the URL itself is unusable: never heals.
 * - `timeout` (the system's, or a connection not made within the caller's connect timeout, which
 *   reports `ETIMEDOUT` the same way), `reset`: transient; retried within the run's deadline.
 */
export type NetworkFailure = 'dns' | 'refused' | 'tls' | 'config' | 'timeout' | 'reset';

const DNS = new Set(['ENOTFOUND', 'EAI_AGAIN', 'EAI_FAIL', 'EAI_NODATA', 'EAI_NONAME']);
const REFUSED = new Set(['ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'EHOSTDOWN', 'ENETDOWN', 'EADDRNOTAVAIL']);
const TIMEOUT = new Set(['ETIMEDOUT', 'ESOCKETTIMEDOUT', 'UND_ERR_CONNECT_TIMEOUT']);
const CONFIG = new Set([
  'ERR_INVALID_URL',
  'ERR_INVALID_PROTOCOL',
  'ERR_UNESCAPED_CHARACTERS',
  'ERR_INVALID_HTTP_TOKEN',
]);
/** OpenSSL verification results Node reports as `code`, besides the `ERR_TLS_*`/`ERR_SSL_*` family. */
const TLS = new Set([
  'EPROTO',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_REVOKED',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'HOSTNAME_MISMATCH',
]);

/** The `code` of an error, or of the first error in its `cause` chain that has one. */
function codeOf(error: unknown): string | undefined {
  let e: unknown = error;
  for (let i = 0; i < 5 && e !== null && typeof e === 'object'; i++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

/** Classifies an error thrown before an HTTP answer arrived. Unknown errors count as resets. */
export function classifyNetworkError(error: unknown): { failure: NetworkFailure; code: string | undefined } {
  const code = codeOf(error);
  if (code === undefined) return { failure: 'reset', code };
  if (DNS.has(code)) return { failure: 'dns', code };
  if (REFUSED.has(code)) return { failure: 'refused', code };
  if (TIMEOUT.has(code)) return { failure: 'timeout', code };
  if (CONFIG.has(code)) return { failure: 'config', code };
  if (TLS.has(code) || code.startsWith('ERR_TLS_') || code.startsWith('ERR_SSL_')) return { failure: 'tls', code };
  return { failure: 'reset', code };
}

/** Words for the run's error: what failed, so the operator knows what to fix. */
export const NETWORK_FAILURE_TEXT: Record<NetworkFailure, string> = {
  dns: 'host name does not resolve',
  refused: 'connection refused or host unreachable',
  tls: 'TLS failure',
  config: 'unusable URL',
  timeout: 'connection timed out',
  reset: 'connection failed',
};
