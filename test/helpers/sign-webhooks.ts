/**
 * Signs requests the way each sender documents it, with Node's crypto, so tests check the
 * verifiers against the published algorithms rather than against themselves.
 */
import { createHmac, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';

export type Headers = Record<string, string>;

const hmacHex = (key: string | Buffer, data: string): string => createHmac('sha256', key).update(data).digest('hex');

/** GitHub: `X-Hub-Signature-256: sha256=<hex HMAC-SHA256(secret, body)>`, plus the delivery GUID. */
export function signGithub(secret: string, body: string, deliveryId = '72d3162e-cc78-11e3-81ab-4c9367dc0958'): Headers {
  return {
    'x-github-event': 'push',
    'x-github-delivery': deliveryId,
    'x-hub-signature-256': `sha256=${hmacHex(secret, body)}`,
  };
}

/** Stripe: `Stripe-Signature: t=<unix>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>`. */
export function signStripe(secret: string, body: string, unixSeconds: number): Headers {
  return { 'stripe-signature': `t=${unixSeconds},v1=${hmacHex(secret, `${unixSeconds}.${body}`)}` };
}

/** Slack: `X-Slack-Signature: v0=<hex HMAC-SHA256(secret, "v0:<ts>:<body>")>` and the timestamp. */
export function signSlack(secret: string, body: string, unixSeconds: number): Headers {
  return {
    'x-slack-request-timestamp': String(unixSeconds),
    'x-slack-signature': `v0=${hmacHex(secret, `v0:${unixSeconds}:${body}`)}`,
  };
}

/** Standard Webhooks `v1,`: base64 HMAC-SHA256 of `<id>.<ts>.<body>` keyed with the decoded `whsec_` secret. */
export function signStandardWebhooks(
  secret: string,
  body: string,
  unixSeconds: number,
  id = 'msg_2KWPBgLlAfxdpx2AI54pPJ85f4W',
): Headers {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const signature = createHmac('sha256', key).update(`${id}.${unixSeconds}.${body}`).digest('base64');
  return { 'webhook-id': id, 'webhook-timestamp': String(unixSeconds), 'webhook-signature': `v1,${signature}` };
}

/** An Ed25519 key pair with its public key written as Standard Webhooks does: `whpk_<base64 raw key>`. */
export function createEd25519Keys(): { privateKey: KeyObject; publicKey: string } {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const jwk = publicKey.export({ format: 'jwk' });
  return { privateKey, publicKey: `whpk_${Buffer.from(jwk.x!, 'base64url').toString('base64')}` };
}

/** Standard Webhooks `v1a,`: base64 Ed25519 signature of `<id>.<ts>.<body>`. */
export function signStandardWebhooksEd25519(
  privateKey: KeyObject,
  body: string,
  unixSeconds: number,
  id = 'msg_2KWPBgLlAfxdpx2AI54pPJ85f4W',
): Headers {
  const signature = sign(null, Buffer.from(`${id}.${unixSeconds}.${body}`), privateKey).toString('base64');
  return { 'webhook-id': id, 'webhook-timestamp': String(unixSeconds), 'webhook-signature': `v1a,${signature}` };
}

/** A generic HMAC header: `<prefix><digest>`. */
export function signHmac(
  secret: string,
  body: string,
  options: { header: string; algorithm?: string; encoding?: 'hex' | 'base64'; prefix?: string },
): Headers {
  const digest = createHmac(options.algorithm ?? 'sha256', secret)
    .update(body)
    .digest(options.encoding ?? 'hex');
  return { [options.header]: `${options.prefix ?? ''}${digest}` };
}
