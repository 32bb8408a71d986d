import type { IncomingHttpHeaders } from 'node:http';

/** Credentials: never kept, never sent on (the relay's own check of them is what the home trusts). */
const CREDENTIALS = new Set(['authorization', 'cookie', 'proxy-authorization', 'x-hookgate-token', 'x-openclaw-token']);
/** This hop's framing, which means nothing at the home. */
const HOP_BY_HOP = new Set([
  'connection',
  'content-length',
  'expect',
  'host',
  'keep-alive',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

/**
 * The headers a relay keeps with a request: all that the home's door may read (a signature and its
 * timestamp, the delivery ids, `content-type`, and what mappings' templates and transforms read,
 * such as `x-github-event`), without credentials or this hop's framing.
 */
export function keepRelayedHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || CREDENTIALS.has(name) || HOP_BY_HOP.has(name)) continue;
    out[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}
