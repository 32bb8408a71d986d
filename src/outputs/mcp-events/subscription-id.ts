import { createHash } from 'node:crypto';
import { canonicalJson } from './canonical-json.js';

/**
 * Everyone holding `mcp.token` is one principal: the gateway has a single MCP credential, so the
 * key has one owner, and two tokens in turn (a rotation) address the same subscriptions.
 */
const PRINCIPAL = 'mcp.token';

/**
 * The subscription id, deterministic over (principal, callback URL, event name, arguments) as the
 * extension and OpenAI's profile require: the same subscribe finds the same subscription, across
 * refreshes, restarts and replicas. A routing handle, not a secret.
 */
export function subscriptionId(url: string, name: string, args: Readonly<Record<string, unknown>>): string {
  const key = canonicalJson([PRINCIPAL, url, name, args]);
  return `sub_${createHash('sha256').update(key).digest('hex').slice(0, 32)}`;
}
