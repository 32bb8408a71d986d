import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { networkInterfaces } from 'node:os';
import type { Issue } from '../common/errors.js';

export interface BindCheckDeps {
  /** Addresses a host name resolves to. @default node:dns lookup (all families) */
  resolve?: (host: string) => Promise<string[]>;
  /** Addresses of this machine's interfaces. @default os.networkInterfaces() */
  localAddresses?: () => string[];
}

const WILDCARDS = new Set(['0.0.0.0', '::']);

const defaultResolve = async (host: string): Promise<string[]> =>
  (await lookup(host, { all: true })).map((a) => a.address);
const defaultLocal = (): string[] =>
  Object.values(networkInterfaces()).flatMap((list) => (list ?? []).map((i) => i.address));

/**
 * `gateway.bind` must name an address of this machine (or the wildcard), directly or through a
 * name that resolves to one: otherwise `serve` cannot listen. `"loopback"` is a name, not an
 * address, and resolves nowhere.
 */
export async function checkBind(bind: string, deps: BindCheckDeps = {}): Promise<Issue[]> {
  const local = new Set((deps.localAddresses ?? defaultLocal)());
  const usable = (address: string): boolean => WILDCARDS.has(address) || local.has(address);
  if (isIP(bind) !== 0) {
    return usable(bind) ? [] : [{ path: 'gateway.bind', message: `${bind} is not an address of this machine` }];
  }
  let addresses: string[];
  try {
    addresses = await (deps.resolve ?? defaultResolve)(bind);
  } catch {
    return [
      {
        path: 'gateway.bind',
        message: `"${bind}" is not an IP address and does not resolve to one (use 127.0.0.1, ::1, 0.0.0.0 or ::)`,
      },
    ];
  }
  if (addresses.some(usable)) return [];
  return [
    {
      path: 'gateway.bind',
      message: `"${bind}" resolves to ${addresses.join(', ') || 'nothing'}, none of them an address of this machine`,
    },
  ];
}
