import { randomBytes, timingSafeEqual } from 'node:crypto';
import { verificationBody } from './build-deliveries.js';
import type { DeliveryFailure, WebhookClient } from './create-webhook-client.js';
import { signWebhook } from './sign-webhook.js';

/** Why a callback failed verification: the extension's categories, never the endpoint's own words. */
type VerificationFailure = DeliveryFailure | 'http_3xx' | 'http_4xx' | 'http_5xx' | 'challenge_failed';

export type VerificationResult = { ok: true } | { ok: false; reason: VerificationFailure; address?: string };

/** How long a callback has to answer its challenge. */
const VERIFY_TIMEOUT_MS = 10_000;

/** `http_4xx` and the like: a status as a category, so no endpoint's answer is echoed to a caller. */
export function statusCategory(status: number): 'http_3xx' | 'http_4xx' | 'http_5xx' {
  return status >= 500 ? 'http_5xx' : status >= 400 ? 'http_4xx' : 'http_3xx';
}

function echoed(body: string, challenge: string): boolean {
  let value: unknown;
  try {
    value = (JSON.parse(body) as { challenge?: unknown }).challenge;
  } catch {
    return false;
  }
  if (typeof value !== 'string') return false;
  const a = Buffer.from(value);
  const b = Buffer.from(challenge);
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * The intent check before any delivery (the extension's anti-flooding rule): a signed
 * `{type: "verification", challenge}` to the callback, which must answer 2xx with the challenge
 * echoed as `{challenge}` (compared in constant time). Made through the same SSRF-checked client.
 */
export async function verifyCallback(
  client: WebhookClient,
  p: { url: string; subscriptionId: string; key: Buffer; nowMs: number; signal: AbortSignal; timeoutMs?: number },
): Promise<VerificationResult> {
  const challenge = randomBytes(24).toString('base64url');
  const body = verificationBody(challenge);
  const messageId = `msg_verification_${randomBytes(12).toString('hex')}`;
  const answer = await client.post({
    url: p.url,
    headers: signWebhook({ key: p.key, messageId, subscriptionId: p.subscriptionId, body, nowMs: p.nowMs }),
    body,
    signal: p.signal,
    timeoutMs: p.timeoutMs ?? VERIFY_TIMEOUT_MS,
  });
  if (answer.kind === 'failed') {
    const address = (answer.error as { address?: unknown }).address;
    return { ok: false, reason: answer.reason, ...(typeof address === 'string' ? { address } : {}) };
  }
  if (answer.status < 200 || answer.status > 299) return { ok: false, reason: statusCategory(answer.status) };
  return echoed(answer.body, challenge) ? { ok: true } : { ok: false, reason: 'challenge_failed' };
}
