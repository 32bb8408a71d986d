import { createHmac } from 'node:crypto';

/** `whsec_` followed by base64 of 24 to 64 random bytes: the Standard Webhooks symmetric secret. */
const SECRET = /^whsec_([A-Za-z0-9+/]+={0,2})$/;

/** The key bytes of a `whsec_` secret, or `null` when it is not one. */
export function decodeWebhookSecret(secret: string): Buffer | null {
  const m = SECRET.exec(secret);
  if (m === null) return null;
  const key = Buffer.from(m[1]!, 'base64');
  // Base64 that does not round-trip (bad padding, stray bits) is not a secret someone generated.
  if (key.toString('base64').replace(/=+$/, '') !== m[1]!.replace(/=+$/, '')) return null;
  return key.length >= 24 && key.length <= 64 ? key : null;
}

/**
 * The headers of one delivery, signed per Standard Webhooks v1 over the exact body bytes:
 * HMAC-SHA256 of `<webhook-id>.<webhook-timestamp>.<body>`, base64, as `v1,<signature>`.
 * Computed afresh for every attempt, so a retry's timestamp is inside the receiver's window.
 */
export function signWebhook(p: {
  key: Buffer;
  messageId: string;
  subscriptionId: string;
  body: string;
  nowMs: number;
}): Record<string, string> {
  const timestamp = String(Math.floor(p.nowMs / 1000));
  const signature = createHmac('sha256', p.key).update(`${p.messageId}.${timestamp}.${p.body}`).digest('base64');
  return {
    'content-type': 'application/json',
    'webhook-id': p.messageId,
    'webhook-timestamp': timestamp,
    'webhook-signature': `v1,${signature}`,
    'x-mcp-subscription-id': p.subscriptionId,
  };
}
