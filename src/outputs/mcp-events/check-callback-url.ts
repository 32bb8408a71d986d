import { isIP } from 'node:net';
import { invalidParam } from './mcp-error.js';
import { refusedClass, type AddressAllowance } from './address-policy.js';

/** Longest callback URL accepted. */
const MAX_URL_CHARS = 2048;

const isLoopbackLiteral = (host: string): boolean => host === '[::1]' || /^127(\.\d{1,3}){3}$/.test(host);

/**
 * Checks a callback URL at subscribe time: absolute, `https:` (`http:` only to a literal loopback
 * address, with `allowLoopbackCallbacks`), no credentials or fragment, and a literal address in no
 * refused range. A hostname is judged again at every connection, by the address it resolves to
 * (create-webhook-client.ts), so DNS rebinding gains nothing.
 */
export function checkCallbackUrl(raw: unknown, allow: AddressAllowance): URL {
  if (typeof raw !== 'string' || raw === '') throw invalidParam('delivery.url', 'must be a non-empty string');
  if (raw.length > MAX_URL_CHARS) throw invalidParam('delivery.url', `must be at most ${MAX_URL_CHARS} characters`);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalidParam('delivery.url', 'is not an absolute URL');
  }
  if (url.protocol === 'http:') {
    if (!allow.loopback || !isLoopbackLiteral(url.hostname)) {
      throw invalidParam(
        'delivery.url',
        'must use https (http only to a literal loopback address, with mcp.allowLoopbackCallbacks)',
      );
    }
  } else if (url.protocol !== 'https:') {
    throw invalidParam('delivery.url', 'must use https');
  }
  if (url.username !== '' || url.password !== '') throw invalidParam('delivery.url', 'must not carry credentials');
  if (url.hash !== '') throw invalidParam('delivery.url', 'must not carry a fragment');
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  if (isIP(host) !== 0) {
    const cls = refusedClass(host, allow);
    if (cls !== null) throw invalidParam('delivery.url', `is a ${cls} address, which callbacks may not reach`);
  }
  return url;
}
