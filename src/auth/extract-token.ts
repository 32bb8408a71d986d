import type { IncomingHttpHeaders } from 'node:http';

const BEARER = /^bearer[ \t]+(\S+)[ \t]*$/i;

/**
 * The hook token a request carries: `Authorization: Bearer <token>`, else `x-hookgate-token`, else
 * `x-openclaw-token` (accepted so existing OpenClaw senders work unchanged). `undefined` if none.
 */
export function extractToken(headers: IncomingHttpHeaders): string | undefined {
  const auth = headers.authorization;
  if (auth !== undefined) {
    const m = BEARER.exec(auth);
    if (m !== null) return m[1];
  }
  const own = headers['x-hookgate-token'] ?? headers['x-openclaw-token'];
  if (typeof own === 'string' && own !== '') return own.trim();
  return undefined;
}
