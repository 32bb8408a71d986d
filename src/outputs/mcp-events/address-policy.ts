import { BlockList, isIP } from 'node:net';

/** Why an address is not one a callback may reach. */
type AddressClass = 'loopback' | 'private' | 'link-local' | 'metadata' | 'reserved';

/** Which of the refused classes a gateway lets callbacks reach (development, a home network). */
export interface AddressAllowance {
  /** `mcp.allowLoopbackCallbacks`. */
  loopback: boolean;
  /** `mcp.allowPrivateCallbacks`. */
  private: boolean;
}

function list(v4: string[], v6: string[] = []): BlockList {
  const b = new BlockList();
  for (const cidr of v4) {
    const [net, bits] = cidr.split('/');
    b.addSubnet(net!, Number(bits), 'ipv4');
  }
  for (const cidr of v6) {
    const [net, bits] = cidr.split('/');
    b.addSubnet(net!, Number(bits), 'ipv6');
  }
  return b;
}

/**
 * The special-purpose ranges of the IANA registries that a callback must not reach (the extension's
 * SSRF rule), by class; metadata endpoints first, since they sit inside the link-local and private
 * ranges and are never allowed.
 */
const CLASSES: ReadonlyArray<[AddressClass, BlockList]> = [
  ['metadata', list(['169.254.169.254/32', '100.100.100.200/32', '168.63.129.16/32'], ['fd00:ec2::254/128'])],
  ['loopback', list(['127.0.0.0/8'], ['::1/128'])],
  ['link-local', list(['169.254.0.0/16'], ['fe80::/10'])],
  ['private', list(['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '100.64.0.0/10'], ['fc00::/7', 'fec0::/10'])],
  [
    'reserved',
    list(
      [
        '0.0.0.0/8',
        '192.0.0.0/24',
        '192.0.2.0/24',
        '192.88.99.0/24',
        '198.18.0.0/15',
        '198.51.100.0/24',
        '203.0.113.0/24',
        '224.0.0.0/4',
        '240.0.0.0/4',
      ],
      ['::/128', '100::/64', '2001:db8::/32', 'ff00::/8'],
    ),
  ],
];

/** An IPv6 address that carries an IPv4 one (mapped `::ffff:a.b.c.d`, NAT64 `64:ff9b::/96`) is judged by it. */
function embeddedV4(address: string): string | null {
  const m = /^(?:::ffff:|64:ff9b::)(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (m !== null) return m[1]!;
  const hex = /^(?:::ffff:|64:ff9b::)([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(address);
  if (hex === null) return null;
  const hi = Number.parseInt(hex[1]!, 16);
  const lo = Number.parseInt(hex[2]!, 16);
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
}

/** The refused class an address falls in, or `null` for a globally routable one. */
export function classifyAddress(address: string): AddressClass | null {
  const bare = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address;
  const family = isIP(bare);
  if (family === 0) return 'reserved';
  const v4 = family === 6 ? embeddedV4(bare) : bare;
  const [target, type] = v4 === null ? [bare, 'ipv6' as const] : [v4, 'ipv4' as const];
  for (const [cls, ranges] of CLASSES) if (ranges.check(target, type)) return cls;
  return null;
}

/** The class that refuses `address` under `allow`, or `null` when a callback may reach it. */
export function refusedClass(address: string, allow: AddressAllowance): AddressClass | null {
  const cls = classifyAddress(address);
  if (cls === 'loopback' && allow.loopback) return null;
  if (cls === 'private' && allow.private) return null;
  return cls;
}

/** A callback's address was refused: raised by the connect-time lookup, so no request is made. */
export class AddressRefusedError extends Error {
  readonly code = 'ADDRESS_REFUSED';
  constructor(
    readonly address: string,
    readonly addressClass: AddressClass,
  ) {
    super(`${address} is a ${addressClass} address, which callbacks may not reach`);
    this.name = 'AddressRefusedError';
  }
}
