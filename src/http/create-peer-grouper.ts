import { isIP } from 'node:net';
import { createTrustedProxyCheck, foldAddress } from './resolve-client-address.js';

/** Loopback peers: the host's own processes, and what forwards to the gateway from it (a reverse proxy, a tunnel). */
const isLoopback = (address: string): boolean =>
  address === '::1' || (isIP(address) === 4 && address.startsWith('127.'));

/**
 * Returns the group a connection's peer address is counted in for
 * `gateway.maxConnectionsPerClient` (see `addressGroup`), or `null` for a peer that is not capped:
 * a trusted proxy or a loopback peer, each of which carries the connections of many clients, or a
 * socket whose peer is already gone.
 */
export function createPeerGrouper(trustedProxies: readonly string[]): (peer: string | undefined) => string | null {
  const trusted = createTrustedProxyCheck(trustedProxies);
  return (peer) => {
    if (peer === undefined) return null;
    const folded = foldAddress(peer);
    return isLoopback(folded) || trusted(folded) ? null : addressGroup(folded);
  };
}

/**
 * The group a client address is counted in for `gateway.maxConnectionsPerClient`,
 * `hooks.maxBodiesPerClient` and the auth lockout: an IPv4 address (IPv4-mapped IPv6 folded)
 * stands for itself; an IPv6 address stands for its /64, the block one host or one subscriber is
 * usually given, so a sender cannot step around a cap by using each address of its own block.
 * Anything else stands for itself.
 */
export function addressGroup(address: string): string {
  if (!address.includes(':')) return address;
  const folded = foldAddress(address);
  const bare = folded.split('%', 1)[0]!;
  if (isIP(bare) !== 6) return folded;
  return `${firstHextets(bare, 4).join(':')}::/64`;
}

/** The first `n` 16-bit groups of a valid IPv6 address, with `::` expanded, lower case, no leading zeros. */
function firstHextets(address: string, n: number): string[] {
  const [head, tail] = address.toLowerCase().split('::') as [string, string | undefined];
  const groups = (part: string | undefined): string[] => {
    if (part === undefined || part === '') return [];
    const out: string[] = [];
    for (const g of part.split(':')) {
      // A dotted IPv4 tail stands for the last two groups; only its count matters to the first four.
      if (g.includes('.')) out.push('0', '0');
      else out.push(g);
    }
    return out;
  };
  const left = groups(head);
  const right = groups(tail);
  const all =
    tail === undefined ? left : [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right];
  return all.slice(0, n).map((g) => Number.parseInt(g, 16).toString(16));
}
