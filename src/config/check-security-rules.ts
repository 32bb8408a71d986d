import { BlockList, isIP } from 'node:net';
import type { Issue } from '../common/errors.js';
import type { Config } from './schema.js';

/** Below this a token or shared secret is refused: the lockout only slows a patient guesser down. */
export const MIN_SECRET_LENGTH = 16;
/** Tokens a client may try a second, sustained, at most: past it the lockout only slows a guesser down. */
const MAX_GUESSES_PER_SECOND = 10;
/** Client addresses the lockout tracks, at least: fewer, and a guesser with that many addresses is forgotten. */
const MIN_TRACKED_CLIENTS = 100;

/** Whether one trusted-proxy entry takes in every IPv4 address, or every IPv6 one (any client could forge its address). */
function coversEveryAddress(entry: string): 'IPv4' | 'IPv6' | null {
  const [addr, bits] = entry.split('/') as [string, string | undefined];
  const family = isIP(addr);
  if (family === 0 || bits === undefined) return null;
  const list = new BlockList();
  try {
    list.addSubnet(addr, Number(bits), family === 6 ? 'ipv6' : 'ipv4');
  } catch {
    return null; // not a range at all: refused as such (check-config-rules.ts)
  }
  // One range is contiguous: it holds every address of a family when it holds both ends. An IPv6
  // range over the IPv4-mapped addresses holds every IPv4 client too.
  if (list.check('0.0.0.0', 'ipv4') && list.check('255.255.255.255', 'ipv4')) return 'IPv4';
  if (list.check('::', 'ipv6') && list.check('ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', 'ipv6')) return 'IPv6';
  return null;
}

/**
 * Settings that would quietly turn a defence off, refused by `hookgate check` and at startup: a
 * token or verify secret short enough to guess, a trusted proxy range that lets every client
 * choose its own address (and so escape the lockout), and failure limits under which the lockout
 * never holds a guesser back.
 */
export function checkSecurityRules(config: Config): Issue[] {
  const issues: Issue[] = [];
  const short = (path: string, value: string | undefined): void => {
    if (value !== undefined && value.length < MIN_SECRET_LENGTH)
      issues.push({
        path,
        message: `is ${value.length} characters long; use at least ${MIN_SECRET_LENGTH} random characters (hookgate token generates one)`,
      });
  };
  short('hooks.token', config.hooks.token);
  short('gateway.auth.token', config.gateway.auth.token);
  short('mcp.token', config.mcp.token);
  config.hooks.mappings.forEach((m, i) => {
    if (m.verify === undefined || !('secret' in m.verify) || m.verify.secret === undefined) return;
    const secret = m.verify.secret;
    if (typeof secret === 'string') short(`hooks.mappings[${i}].verify.secret`, secret);
    else for (const [j, s] of secret.entries()) short(`hooks.mappings[${i}].verify.secret[${j}]`, s);
  });
  config.gateway.trustedProxies.forEach((p, i) => {
    const every = coversEveryAddress(p);
    if (every !== null)
      issues.push({
        path: `gateway.trustedProxies[${i}]`,
        message: `covers every ${every} address: any client could name its own address in X-Forwarded-For and escape the lockout; list your proxies' addresses`,
      });
  });
  const { maxFailures, windowSeconds, lockoutSeconds, maxClients } = config.hooks.authRateLimit;
  // A guesser staying under the limit tries maxFailures - 1 a window; one that goes over tries
  // maxFailures a lockout.
  const perSecond = Math.max((maxFailures - 1) / windowSeconds, maxFailures / lockoutSeconds);
  if (perSecond > MAX_GUESSES_PER_SECOND)
    issues.push({
      path: 'hooks.authRateLimit',
      message: `lets a client try ${Math.round(perSecond)} tokens a second; at most ${MAX_GUESSES_PER_SECOND} (fewer maxFailures, or a longer windowSeconds and lockoutSeconds)`,
    });
  if (maxClients < MIN_TRACKED_CLIENTS)
    issues.push({
      path: 'hooks.authRateLimit.maxClients',
      message: `must be at least ${MIN_TRACKED_CLIENTS}: a guesser with more addresses than that is forgotten before it is locked out`,
    });
  return issues;
}
