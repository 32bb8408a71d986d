/** Turns a text that may echo a credential into one that does not. */
export type Scrub = (text: string) => string;

/** What a removed secret is replaced with. */
const REDACTED = '[redacted]';

/** Leaves the text as it is; the default where no scrubber is wired. */
export const keepText: Scrub = (text) => text;

/**
 * Shapes of credentials that services echo back in errors ("Incorrect API key provided: sk-…"),
 * whether or not this gateway holds them. Each keeps its recognisable head so the log stays useful.
 */
const KEY_SHAPES: ReadonlyArray<readonly [RegExp, string]> = [
  [/\bsk-ant-[A-Za-z0-9_-]{8,}/g, `sk-ant-${REDACTED}`],
  [/\bsk-(?:proj-|svcacct-|or-v1-)?[A-Za-z0-9_-]{16,}/g, `sk-${REDACTED}`],
  [/\bxox[abposre]-[A-Za-z0-9-]{8,}/g, `xox-${REDACTED}`],
  [/\bxapp-[A-Za-z0-9-]{8,}/g, `xapp-${REDACTED}`],
  [/\bgh[pousr]_[A-Za-z0-9]{20,}/g, `gh_${REDACTED}`],
  [/\bgithub_pat_[A-Za-z0-9_]{20,}/g, `github_pat_${REDACTED}`],
  [/\bwhsec_[A-Za-z0-9+/=_-]{8,}/g, `whsec_${REDACTED}`],
  [/\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{10,}/g, `sk_${REDACTED}`],
  [/\bAKIA[0-9A-Z]{16}\b/g, `AKIA${REDACTED}`],
  [/\bAIza[0-9A-Za-z_-]{30,}/g, `AIza${REDACTED}`],
  // Telegram bot tokens, alone or in a Bot API URL (`/bot123456:AA…/sendMessage`).
  [/(?<![0-9])\d{5,12}:[A-Za-z0-9_-]{30,}/g, REDACTED],
  // JSON Web Tokens.
  [/\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g, REDACTED],
  [/\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]{8,}/gi, `$1 ${REDACTED}`],
  // Discord's `Authorization: Bot <token>`; long enough not to take "Bot Framework" for one.
  [/\bBot\s+[A-Za-z0-9._-]{20,}/g, `Bot ${REDACTED}`],
  // user:password@ in URLs.
  [/(\b[a-z][a-z0-9+.-]*:\/\/[^\s/:@]+:)[^\s/@]+@/gi, `$1${REDACTED}@`],
  // Credentials in query strings and key=value text.
  [
    /([?&;\s](?:api[_-]?key|access[_-]?token|token|key|secret|password|passwd|pwd|signature|sig)=)[^&\s"']+/gi,
    `$1${REDACTED}`,
  ],
];

/** Shorter configured values are not scrubbed by value: they would match ordinary words. */
const MIN_SECRET_LENGTH = 6;

const escapeRegExp = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * Creates a scrubber that replaces every known secret by value (also percent-encoded, as it
 * appears in a URL), longest first, then every common key shape.
 * @param secrets the configured tokens, API keys, channel credentials and verify secrets.
 */
export function createSecretScrubber(secrets: readonly string[]): Scrub {
  const values = new Set<string>();
  for (const s of secrets) {
    if (s.length < MIN_SECRET_LENGTH) continue;
    values.add(s);
    values.add(encodeURIComponent(s));
  }
  const known = [...values].sort((a, b) => b.length - a.length).map(escapeRegExp);
  const byValue = known.length === 0 ? null : new RegExp(known.join('|'), 'g');
  return (text) => {
    let out = byValue === null ? text : text.replace(byValue, REDACTED);
    for (const [shape, replacement] of KEY_SHAPES) out = out.replace(shape, replacement);
    return out;
  };
}
