import { compileLinkHosts, hasKnownTld, toAsciiHost, type LinkHostCheck } from './link-hosts.js';

/**
 * The exfiltration guard on a reply, before it reaches a chat service. A payload that reached the
 * model can ask it to carry data out: in a link the user clicks, a link the service unfurls, or an
 * image a client fetches on its own. So:
 *
 * - images go: Markdown `![alt](url)` and `![alt][ref]` become `(image: alt)`; HTML tags that
 *   fetch (`<img src>`, `<iframe src>`, `<video poster>`, `<link href>`, …) are removed, an `<img>`
 *   leaving its alt;
 * - a link to a host not in `allowedLinkHosts` is made inert: `https://evil.example/c?d=SECRET`
 *   becomes `hxxps://evil[.]example/…`. The host stays readable (in its ASCII form, which unmasks
 *   look-alike letters), every dot is bracketed so no linkifier sees a domain, and path, query,
 *   fragment, user and port are dropped, since that is where the data rides. This holds for bare
 *   URLs, Markdown links (`[label](url)` becomes `label (hxxps://…)`), autolinks and Slack's
 *   `<url|label>`, bare domains (`evil.com/x`, `www.evil.example`, the domain of an address), and
 *   URLs that are not web links at all (`javascript:`, `data:`, `mailto:` become `javascript[:]…`);
 * - a link to an allowed host, over http or https, is left as it is.
 *
 * The guard is pure and deterministic: a retry of a delivery splits the same text the same way.
 */
export function guardReply(text: string, options: { allowedLinkHosts: readonly string[] }): string {
  // The `!` of an image is dropped wherever one is left: the pieces the guard rewrote can meet
  // around it (`![` before a link it made inert) in a shape no single match saw.
  return guardText(decodeUrlEntities(text), compileLinkHosts(options.allowedLinkHosts)).replace(/!(?=\[)/g, '');
}

const DOTS = '.\\u3002\\uff0e\\uff61';
const LABEL = '[\\p{L}\\p{N}\\p{M}-]';
/** A Markdown link destination (one level of parentheses, or `<…>`) and an optional title. */
const DEST =
  '\\s*(?:<[^>\\n]*>|(?:[^()\\s]|\\([^()\\s]*\\))*)(?:\\s+(?:"[^"\\n]*"|\'[^\'\\n]*\'|\\([^()\\n]*\\)))?\\s*';
const URL_CHARS = '[^\\s<>"\'`]';
/** Schemes whose URL is code, inline data or an action, with no `//`: never a link worth keeping. */
const OPAQUE_SCHEMES = 'javascript|vbscript|livescript|data|mailto|file|blob|intent|view-source|jar|filesystem';
/** Elements whose markup makes a client fetch something by itself. */
const FETCHING_TAGS =
  'img|image|picture|source|video|audio|track|iframe|frame|frameset|embed|object|applet|svg|link|meta|base|style|input|body';

/** An attribute that names something to fetch: a tag without one (`<input>` in prose) stays. */
const FETCHING_ATTRIBUTE = '(?:src|srcset|href|xlink:href|data|poster|background|action|formaction|style)\\s*=';

const PATTERN = new RegExp(
  [
    `(?<image>!\\[(?<alt>[^\\]\\n]{0,1000})\\](?:\\((?:${DEST})\\)|\\[[^\\]\\n]{0,1000}\\])?)`,
    `(?<tag><(?<tagName>${FETCHING_TAGS})(?![\\w-])(?=[^>]{0,4000}?\\s${FETCHING_ATTRIBUTE})[^>]{0,4000}>?)`,
    `(?<mdLink>\\[(?<label>[^\\]\\n]{0,1000})\\]\\((?<dest>${DEST})\\))`,
    `(?<angle><(?<angleUrl>[a-z][a-z0-9+.-]{1,31}:[^\\s<>|]{0,4000})(?:\\|(?<angleLabel>[^<>\\n]{0,1000}))?>)`,
    `(?<![\\p{L}\\p{N}+.-])(?<url>[a-z][a-z0-9+.-]{1,31}:\\/\\/${URL_CHARS}*)`,
    `(?<![\\p{L}\\p{N}+.-])(?<opaque>(?:${OPAQUE_SCHEMES}):${URL_CHARS}+)`,
    `(?<![\\p{L}\\p{N}\\p{M}_${DOTS}-])(?<host>(?:${LABEL}{1,63}[${DOTS}]){1,126}${LABEL}{1,63})(?<port>:\\d{1,5})?(?<path>[/?#]${URL_CHARS}*)?`,
  ].join('|'),
  'giu',
);

interface Groups {
  image?: string;
  alt?: string;
  tag?: string;
  tagName?: string;
  mdLink?: string;
  label?: string;
  dest?: string;
  angle?: string;
  angleUrl?: string;
  angleLabel?: string;
  url?: string;
  opaque?: string;
  host?: string;
  port?: string;
  path?: string;
}

function guardText(text: string, allowed: LinkHostCheck): string {
  return text.replace(PATTERN, (match: string, ...args: unknown[]) => {
    const g = args.at(-1) as Groups;
    const offset = args.at(-3) as number;
    if (g.image !== undefined) return imageNote(g.alt ?? '', allowed);
    if (g.tag !== undefined) return /^(img|image)$/i.test(g.tagName ?? '') ? imageNote(altOf(g.tag), allowed) : '';
    if (g.mdLink !== undefined) return guardMarkdownLink(match, g.label ?? '', g.dest ?? '', allowed);
    if (g.angle !== undefined) {
      const inert = inertUrl(g.angleUrl ?? '', allowed);
      const label = g.angleLabel === undefined ? undefined : guardText(g.angleLabel, allowed);
      if (inert === null) return label === undefined ? match : `<${g.angleUrl}|${label}>`;
      return label === undefined ? inert : `${label} (${inert})`;
    }
    if (g.url !== undefined || g.opaque !== undefined) {
      const [token, trailer] = splitTrailer(match);
      return `${inertUrl(token, allowed) ?? token}${trailer}`;
    }
    return guardBareHost(match, g, text.charAt(offset - 1), allowed);
  });
}

function imageNote(alt: string, allowed: LinkHostCheck): string {
  const text = guardText(alt, allowed).trim();
  return text === '' ? '(image)' : `(image: ${text})`;
}

function altOf(tag: string): string {
  const m = /\salt\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))/i.exec(tag);
  return m?.[1] ?? m?.[2] ?? m?.[3] ?? '';
}

/** `[label](url)`: kept when the URL is allowed, else the label followed by the inert URL. */
function guardMarkdownLink(match: string, label: string, rawDest: string, allowed: LinkHostCheck): string {
  const dest = /^\s*(?:<([^>]*)>|(\S*))/.exec(rawDest);
  const url = dest?.[1] ?? dest?.[2] ?? '';
  const safeLabel = guardText(label, allowed);
  const isWeb = /^(?:https?:)?\/\//i.test(url);
  const inert = isWeb || /^[a-z][a-z0-9+.-]*:|^\/\//i.test(url) ? inertUrl(url, allowed) : guardText(url, allowed);
  if (isWeb && inert === null) return `[${safeLabel}]${match.slice(label.length + 2)}`;
  return `${safeLabel} (${inert ?? url})`;
}

/** The inert form of a URL, or `null` when it is an http(s) link to an allowed host. */
function inertUrl(raw: string, allowed: LinkHostCheck): string | null {
  const withScheme = raw.startsWith('//') ? `https:${raw}` : raw;
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(withScheme)?.[1]?.toLowerCase();
  if (scheme === undefined) return guardText(raw, allowed);
  const rest = withScheme.slice(scheme.length + 1);
  if (!rest.startsWith('//')) return `${scheme}[:]…`;
  let parsed: URL | null = null;
  try {
    parsed = new URL(withScheme);
  } catch {
    // Not a URL a browser would follow; shown inert all the same.
  }
  if (parsed !== null && parsed.hostname !== '') {
    if ((scheme === 'http' || scheme === 'https') && allowed(parsed.hostname.replace(/\.$/, ''))) return null;
    const more = parsed.pathname.replace(/^\/$/, '') + parsed.search + parsed.hash + parsed.username + parsed.port;
    return `${schemePrefix(scheme)}${defang(parsed.hostname)}${more === '' ? '' : '/…'}`;
  }
  const authority = rest.slice(2).split(/[/?#\\]/, 1)[0] ?? '';
  const host = authority.slice(authority.lastIndexOf('@') + 1).replace(/:\d*$/, '');
  const more = authority !== host || rest.length > authority.length + 2;
  return `${schemePrefix(scheme)}${defang(toAsciiHost(host) ?? host)}${more ? '/…' : ''}`;
}

function schemePrefix(scheme: string): string {
  if (scheme === 'http' || scheme === 'hxxp') return 'hxxp://';
  if (scheme === 'https' || scheme === 'hxxps') return 'hxxps://';
  return `${scheme}[:]//`;
}

/** Every dot of a host bracketed, so no linkifier sees a domain in it. */
function defang(host: string): string {
  return host.replace(/\[\.\]|[.\u3002\uff0e\uff61]/g, '[.]');
}

/**
 * A bare `name.tld`, with or without a port and path. Made inert when a linkifier would take it
 * for a link: a top-level domain on IANA's list (or in punycode), a `www.` start, an address's
 * domain, or a port or path after it; an IPv4 address only with a port, a path or an `@`.
 */
function guardBareHost(match: string, g: Groups, before: string, allowed: LinkHostCheck): string {
  const rawHost = g.host ?? '';
  const [tail, trailer] = splitTrailer(`${g.port ?? ''}${g.path ?? ''}`);
  const ascii = toAsciiHost(rawHost);
  const pathLike = /^(?::\d|[/?#][^\s.,;:!?)]|\/$)/.test(tail);
  const numeric = /^[\d.]+$/.test(ascii ?? rawHost);
  const linkLike = numeric
    ? pathLike || before === '@'
    : pathLike || before === '@' || /^www[.]/i.test(ascii ?? '') || (ascii !== null && hasKnownTld(ascii));
  if (!linkLike) return match;
  if (ascii !== null && allowed(ascii)) return match;
  // An ASCII name keeps its case; any other is shown as the ASCII form a browser would reach.
  const host = defang(ascii === null || ascii === rawHost.toLowerCase() ? rawHost : ascii);
  return tail === '' ? `${host}${trailer}` : `${host}/…${trailer}`;
}

/**
 * Splits the punctuation that ends a sentence off a URL, as linkifiers do: `.`, `,`, `!`, quotes,
 * and a closing bracket that has no opening one inside the URL.
 */
function splitTrailer(token: string): [string, string] {
  let end = token.length;
  while (end > 0) {
    const c = token.charAt(end - 1);
    const body = token.slice(0, end);
    if ('.,;:!?*_~\'"'.includes(c)) end--;
    else if (c === ')' && count(body, ')') > count(body, '(')) end--;
    else if (c === ']' && count(body, ']') > count(body, '[')) end--;
    else break;
  }
  return [token.slice(0, end), token.slice(end)];
}

function count(text: string, c: string): number {
  return text.split(c).length - 1;
}

const NAMED: Readonly<Record<string, string>> = {
  period: '.',
  colon: ':',
  sol: '/',
  commat: '@',
  quest: '?',
  equals: '=',
  num: '#',
  percnt: '%',
};

/**
 * Markdown renderers decode character references before they find links, so `evil&#46;example`
 * shows, and may be linked, as `evil.example`. References to the characters a URL is made of are
 * decoded first; `&lt;`, `&gt;` and `&amp;` stay, since chat markup gives them a meaning.
 */
function decodeUrlEntities(text: string): string {
  if (!text.includes('&')) return text;
  return text.replace(/&(?:#(\d{1,7})|#x([0-9a-f]{1,6})|([a-z]{2,8}));/gi, (ref, dec, hex, name) => {
    if (name !== undefined) return NAMED[(name as string).toLowerCase()] ?? ref;
    const code = dec !== undefined ? Number(dec) : Number.parseInt(hex as string, 16);
    if (code > 0x10ffff) return ref;
    const c = String.fromCodePoint(code);
    return /^[\p{L}\p{N}.:/@?=#%_~+-]$/u.test(c) || '\u3002\uff0e\uff61'.includes(c) ? c : ref;
  });
}
