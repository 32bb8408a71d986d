import { parseRetryAfterMs } from '../../common/retry.js';
import { sendRequest, type HttpResponse } from '../../common/send-request.js';
import { classifyNetworkError, NETWORK_FAILURE_TEXT } from './classify-network-error.js';
import { ProviderError } from './model-provider.js';

/**
 * How long each try may take to connect (TLS handshake included) before it fails as a connection
 * timeout, which is retried while the run's time allows. Without it, a host that drops packets
 * silently holds each try for the system's own connect timeout, about two minutes on Linux. A
 * model API connects in well under a second; 10 s is also `fetch`'s (undici's) connect timeout.
 * Once connected there is no bound of its own: a long generation sends nothing until it is done,
 * and the run's `timeoutSeconds` ends the wait.
 */
const CONNECT_TIMEOUT_MS = 10_000;

/** Reads `error.message` (OpenAI, Anthropic) or a top-level `message` from an error body. */
function errorMessage(body: unknown, fallback: string): string {
  if (body !== null && typeof body === 'object') {
    const err = (body as { error?: unknown }).error;
    if (err !== null && typeof err === 'object' && typeof (err as { message?: unknown }).message === 'string') {
      return (err as { message: string }).message;
    }
    if (typeof err === 'string') return err;
    const msg = (body as { message?: unknown }).message;
    if (typeof msg === 'string') return msg;
  }
  return fallback;
}

/**
 * POSTs JSON and returns the parsed JSON answer. Non-2xx answers become a `ProviderError` carrying
 * the provider's own message; 408, 409, 429 and 5xx are retryable, with `Retry-After` read; 401,
 * 403, 404 and other 4xx are not. A failure before any answer is classified (DNS, refused, TLS…):
 * TLS and URL failures are not retryable, the rest are (the retry loop bounds DNS and refused).
 */
export async function postJson(
  url: string,
  body: unknown,
  options: {
    headers: Record<string, string>;
    signal: AbortSignal;
    provider: string;
    now: () => number;
    /** @default CONNECT_TIMEOUT_MS */
    connectTimeoutMs?: number | undefined;
  },
): Promise<unknown> {
  let res: HttpResponse;
  try {
    res = await sendRequest(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json', ...options.headers },
      body: JSON.stringify(body),
      signal: options.signal,
      connectTimeoutMs: options.connectTimeoutMs ?? CONNECT_TIMEOUT_MS,
    });
  } catch (error) {
    if (options.signal.aborted) throw error;
    const { failure, code } = classifyNetworkError(error);
    const detail = `${(error as Error).message}${code === undefined || (error as Error).message.includes(code) ? '' : ` (${code})`}`;
    throw new ProviderError(`${options.provider}: ${NETWORK_FAILURE_TEXT[failure]}: ${detail}`, {
      retryable: failure !== 'tls' && failure !== 'config',
      network: failure,
      cause: error,
    });
  }
  const { text } = res;
  let parsed: unknown;
  try {
    parsed = text === '' ? null : JSON.parse(text);
  } catch {
    parsed = null;
  }
  if (res.status < 200 || res.status >= 300) {
    const retryable = res.status === 408 || res.status === 409 || res.status === 429 || res.status >= 500;
    const retryAfterMs = parseRetryAfterMs(res.headers.get('retry-after'), options.now());
    const message = errorMessage(parsed, text.slice(0, 200) || `HTTP ${res.status}`);
    throw new ProviderError(`${options.provider} ${res.status}: ${message}`, {
      status: res.status,
      retryable,
      ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
    });
  }
  if (parsed === null) {
    throw new ProviderError(`${options.provider}: response is not JSON`, { status: res.status, retryable: false });
  }
  return parsed;
}
