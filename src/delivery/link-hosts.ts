import { domainToASCII } from 'node:url';
import TLDS from 'tlds' with { type: 'json' };

/**
 * The root zone's top-level domains (IANA's list, as the `tlds` package ships it), in their ASCII
 * form: what chat services' linkifiers recognise in a bare `name.tld`. `xn--` labels are checked by
 * their prefix, so a TLD delegated after this list was made still counts when written in punycode.
 */
const KNOWN_TLDS: ReadonlySet<string> = new Set(TLDS.map((t) => domainToASCII(t) || t.toLowerCase()));

/** Whether a host's last label is a top-level domain a linkifier would recognise. */
export function hasKnownTld(asciiHost: string): boolean {
  const tld = asciiHost.slice(asciiHost.lastIndexOf('.') + 1);
  return KNOWN_TLDS.has(tld) || tld.startsWith('xn--');
}

/**
 * A host written by hand or taken from text, as a browser resolves it: IDNA to ASCII (punycode,
 * full-width forms folded), lower case, without a trailing dot. `null` when it is no valid host.
 */
export function toAsciiHost(host: string): string | null {
  const ascii = domainToASCII(host.replace(/[\u3002\uff0e\uff61]/g, '.'));
  if (ascii === '') return null;
  return ascii.replace(/\.$/, '');
}

/** Whether a link's host may stay followable: listed exactly, or under a listed `*.` entry, or `*` listed. */
export type LinkHostCheck = (asciiHost: string) => boolean;

/**
 * Compiles `delivery.allowedLinkHosts`: `github.com` allows that host only, `*.github.com` any host
 * under it (not `github.com` itself), `*` every host. Entries are compared in their ASCII form, so
 * `bücher.example` and `xn--bcher-kva.example` are the same entry.
 */
export function compileLinkHosts(entries: readonly string[]): LinkHostCheck {
  if (entries.includes('*')) return () => true;
  const exact = new Set<string>();
  const suffixes: string[] = [];
  for (const entry of entries) {
    const wildcard = entry.startsWith('*.');
    const host = toAsciiHost(wildcard ? entry.slice(2) : entry);
    if (host === null) continue;
    if (wildcard) suffixes.push(`.${host}`);
    else exact.add(host);
  }
  return (asciiHost) => exact.has(asciiHost) || suffixes.some((s) => asciiHost.endsWith(s));
}
