import { linkSignals } from '../common/link-signals.js';
import { sendRequest, type HttpResponse } from '../common/send-request.js';
import { CatchUpError } from './catch-up-source.js';

/** How long one call to a provider's API may take. */
const CALL_TIMEOUT_MS = 30_000;
const CONNECT_TIMEOUT_MS = 10_000;

/** A provider's answer: its status, a header reader, the body as text and parsed as JSON (`null` when it is not). */
interface ProviderAnswer {
  status: number;
  header(name: string): string | null;
  text: string;
  json: unknown;
}

/** The provider's own words for an error: GitHub's `message`, Stripe's `error.message`. */
function providerMessage(json: unknown): string | null {
  const o = json as { message?: unknown; error?: { message?: unknown } } | null;
  const m = typeof o?.message === 'string' ? o.message : typeof o?.error?.message === 'string' ? o.error.message : null;
  return m === null ? null : m.slice(0, 300);
}

/**
 * One call to a provider's API, bounded by a timeout and `signal`, answered 2xx or failing with a
 * `CatchUpError` that names the call (method and path, never the query or the credential) and the
 * provider's reason. Only URLs under `origin` are called: a `Link` header pointing elsewhere must not
 * receive the token.
 */
export async function callProvider(
  origin: string,
  url: string,
  init: { method: 'GET' | 'POST'; headers: Record<string, string>; signal: AbortSignal },
): Promise<ProviderAnswer> {
  const target = new URL(url);
  if (target.origin !== origin) throw new CatchUpError(`refusing to follow a link off ${origin} (to ${target.origin})`);
  const what = `${init.method} ${target.pathname}`;
  const timeout = AbortSignal.timeout(CALL_TIMEOUT_MS);
  const linked = linkSignals([init.signal, timeout]);
  let res: HttpResponse;
  try {
    res = await sendRequest(url, {
      method: init.method,
      headers: init.headers,
      signal: linked.signal,
      connectTimeoutMs: CONNECT_TIMEOUT_MS,
    });
  } catch (error) {
    const why = timeout.aborted ? `no answer within ${CALL_TIMEOUT_MS} ms` : (error as Error).message;
    throw new CatchUpError(`${what}: ${why}`, null, { cause: error });
  } finally {
    linked.dispose();
  }
  let json: unknown = null;
  try {
    json = res.text === '' ? null : JSON.parse(res.text);
  } catch {
    // Not JSON: the status says enough.
  }
  if (res.status < 200 || res.status > 299) {
    const reason = providerMessage(json);
    throw new CatchUpError(`${what}: HTTP ${res.status}${reason === null ? '' : ` (${reason})`}`, res.status);
  }
  return { status: res.status, header: (name) => res.headers.get(name), text: res.text, json };
}
