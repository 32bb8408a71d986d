import { randomUUID } from 'node:crypto';
import type { VerifyConfig } from '../../config/index.js';
import { hmac, secretsOf } from './_crypto.js';
import { createStandardWebhooksKeys } from './verify-standard-webhooks.js';

/**
 * Headers that sign `body` the way the mapping's sender would, with its first secret: what
 * `hookgate send --sign` uses to try a signed mapping end to end. Throws when the scheme needs a
 * key the gateway does not hold (Standard Webhooks `v1a,` is verified with a public key only).
 */
export function signRequest(verify: VerifyConfig, body: string, nowMs: number): Record<string, string> {
  const seconds = Math.floor(nowMs / 1000);
  const first = (secret: string | readonly string[]): string => secretsOf(secret)[0]!;
  switch (verify.kind) {
    case 'github':
      return {
        'x-hub-signature-256': `sha256=${hmac('sha256', first(verify.secret), [body]).toString('hex')}`,
        'x-github-delivery': randomUUID(),
        'x-github-event': 'ping',
      };
    case 'stripe':
      return {
        'stripe-signature': `t=${seconds},v1=${hmac('sha256', first(verify.secret), [`${seconds}.`, body]).toString('hex')}`,
      };
    case 'slack':
      return {
        'x-slack-request-timestamp': String(seconds),
        'x-slack-signature': `v0=${hmac('sha256', first(verify.secret), [`v0:${seconds}:`, body]).toString('hex')}`,
      };
    case 'standard-webhooks': {
      const keys = createStandardWebhooksKeys(verify);
      const key = keys.secrets[0];
      if (key === undefined)
        throw new Error('this mapping verifies Ed25519 (v1a) signatures: only the sender holds the private key');
      const id = `msg_${randomUUID().replaceAll('-', '')}`;
      const signature = hmac('sha256', key, [`${id}.${seconds}.`, body]).toString('base64');
      return { 'webhook-id': id, 'webhook-timestamp': String(seconds), 'webhook-signature': `v1,${signature}` };
    }
    case 'hmac': {
      const digest = hmac(verify.algorithm ?? 'sha256', first(verify.secret), [body]).toString(
        verify.encoding ?? 'hex',
      );
      return { [verify.header.toLowerCase()]: `${verify.prefix ?? ''}${digest}` };
    }
  }
}
