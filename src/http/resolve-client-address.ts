import { BlockList, isIP } from 'node:net';

/** Folds an IPv4-mapped IPv6 address (`::ffff:1.2.3.4`) to plain IPv4. */
export function foldAddress(address: string): string {
  return address.length > 7 && address.startsWith('::ffff:') && isIP(address.slice(7)) === 4
    ? address.slice(7)
    : address;
}

/**
 * Whether a peer address is one of `trustedProxies` (addresses or CIDR ranges, checked at config
 * load); never, when there are none.
 */
export function createTrustedProxyCheck(trustedProxies: readonly string[]): (address: string) => boolean {
  if (trustedProxies.length === 0) return () => false;
  const list = new BlockList();
  for (const entry of trustedProxies) {
    const [addr, bits] = entry.split('/') as [string, string | undefined];
    const type = isIP(addr) === 6 ? 'ipv6' : 'ipv4';
    if (bits === undefined) list.addAddress(addr, type);
    else list.addSubnet(addr, Number(bits), type);
  }
  return (address) => {
    const family = isIP(address);
    return family !== 0 && list.check(address, family === 6 ? 'ipv6' : 'ipv4');
  };
}

/**
 * Returns a resolver of the client address a request is accounted to: the socket address, or,
 * when the socket peer is a trusted proxy, the right-most `X-Forwarded-For` hop that is not
 * itself a trusted proxy (hops to the left of it could have been written by the client).
 */
export function createClientAddressResolver(
  trustedProxies: readonly string[],
): (socketAddress: string | undefined, forwardedFor: string | string[] | undefined) => string {
  if (trustedProxies.length === 0) return (socket) => foldAddress(socket ?? 'unknown');
  const trusted = createTrustedProxyCheck(trustedProxies);
  return (socketAddress, forwardedFor) => {
    const socket = foldAddress(socketAddress ?? 'unknown');
    if (!trusted(socket) || forwardedFor === undefined) return socket;
    const hops = (Array.isArray(forwardedFor) ? forwardedFor.join(',') : forwardedFor)
      .split(',')
      .map((h) => foldAddress(h.trim()))
      .filter((h) => h !== '');
    for (let i = hops.length - 1; i >= 0; i--) {
      const hop = hops[i]!;
      if (isIP(hop) === 0) return socket; // a garbled header is not believed
      if (!trusted(hop)) return hop;
    }
    return hops[0] ?? socket;
  };
}
