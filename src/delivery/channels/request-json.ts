import { parseRetryAfterMs } from '../../common/retry.js';
import { sendRequest, type HttpResponse } from '../../common/send-request.js';
import { DeliveryError, isRetryableStatus } from '../channel-adapter.js';

export interface JsonResponse {
  status: number;
  headers: HttpResponse['headers'];
  /** Parsed JSON body, or `null` when the body is empty or not JSON. */
  body: unknown;
  text: string;
}

/**
 * Sends one HTTP request with a JSON (or form) body and reads the answer. A network failure or
 * abort becomes a retryable `DeliveryError`; the status is left to the adapter, which knows where
 * its API puts the error text and the retry hint.
 */
export async function requestJson(
  channel: string,
  url: string,
  init: {
    method?: string;
    headers?: Record<string, string>;
    body?: unknown;
    form?: URLSearchParams;
    signal: AbortSignal;
  },
): Promise<JsonResponse> {
  let res: HttpResponse;
  try {
    res = await sendRequest(url, {
      method: init.method ?? 'POST',
      headers: {
        accept: 'application/json',
        ...(init.form !== undefined
          ? { 'content-type': 'application/x-www-form-urlencoded' }
          : init.body !== undefined
            ? { 'content-type': 'application/json' }
            : {}),
        ...init.headers,
      },
      ...(init.form !== undefined
        ? { body: init.form.toString() }
        : init.body !== undefined
          ? { body: JSON.stringify(init.body) }
          : {}),
      signal: init.signal,
    });
  } catch (error) {
    const why = init.signal.aborted ? 'timed out' : (error as Error).message;
    throw new DeliveryError(`${channel}: request failed: ${why}`, { retryable: true, cause: error });
  }
  const text = res.text;
  let body: unknown = null;
  try {
    body = text === '' ? null : JSON.parse(text);
  } catch {
    body = null;
  }
  return { status: res.status, headers: res.headers, body, text };
}

/**
 * Throws the `DeliveryError` for a non-2xx answer: retryable for 408/429/5xx, with the hint from
 * `Retry-After` or from `bodyRetryAfterSeconds` when the API puts it in the body.
 */
export function failOnStatus(
  channel: string,
  res: JsonResponse,
  message: string | undefined,
  options: { bodyRetryAfterSeconds?: number | undefined; now?: number } = {},
): void {
  if (res.status >= 200 && res.status < 300) return;
  const header = parseRetryAfterMs(res.headers.get('retry-after'), options.now ?? Date.now());
  const fromBody =
    options.bodyRetryAfterSeconds === undefined ? undefined : Math.round(options.bodyRetryAfterSeconds * 1000);
  const retryAfterMs = fromBody ?? header;
  throw new DeliveryError(`${channel} ${res.status}: ${message ?? (res.text.slice(0, 200) || 'request failed')}`, {
    status: res.status,
    retryable: isRetryableStatus(res.status),
    ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
  });
}
