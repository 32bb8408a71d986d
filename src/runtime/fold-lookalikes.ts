/**
 * Folding untrusted text so look-alikes cannot hide a marker from a pattern. Two steps:
 * `stripInvisible` changes the text itself (NFKC, then no default-ignorable or format characters),
 * `skeletonOf` makes a same-length copy in which each look-alike letter, dash or angle bracket is
 * replaced by the ASCII character it imitates; patterns run on the skeleton and their matches are
 * cut from the text at the same offsets, so everything else is shown as it came.
 */

/**
 * Zero-width and joiner characters (U+200B–U+200F), soft hyphen (U+00AD), word joiner and
 * invisible operators (U+2060–U+2064), BOM (U+FEFF), bidi controls, the tag block
 * (U+E0000–U+E007F), variation selectors, Hangul fillers: every format (Cf) and
 * default-ignorable code point.
 */
const INVISIBLE = /[\p{Cf}\p{Default_Ignorable_Code_Point}\u{E0000}-\u{E007F}]/gu;

/** NFKC (full-width and compatibility forms to their plain letters), then no invisible characters. */
export function stripInvisible(text: string): string {
  return text.normalize('NFKC').replace(INVISIBLE, '').normalize('NFKC');
}

/** Stand-ins in the skeleton for a character that looks like two angle brackets (`≪`, `《`). */
export const DOUBLE_LEFT = '\u226A';
export const DOUBLE_RIGHT = '\u226B';

const LEFT =
  '<\uFF1C\uFE64\u2039\u00AB\u2329\u27E8\u3008\u1438\u276E\u276C\u02C2\u2264\u22D6\u29FC\u2989\u2991\u27E6\u2770\u3014\u3016\u3018\u301A\u2A7D';
const RIGHT =
  '>\uFF1E\uFE65\u203A\u00BB\u232A\u27E9\u3009\u1433\u276F\u276D\u02C3\u2265\u22D7\u29FD\u298A\u2992\u27E7\u2771\u3015\u3017\u3019\u301B\u2A7E';
/** ≪ ⟪ ⋘ 《 ⫷ and their mirrors: one character drawn as two brackets. */
const DOUBLE_LEFTS = '\u226A\u27EA\u22D8\u300A\u2AF7';
const DOUBLE_RIGHTS = '\u226B\u27EB\u22D9\u300B\u2AF8';
const DASHES = '\u2010\u2011\u2012\u2013\u2014\u2015\u2212\uFE58\uFE63\uFF0D\u2043';

/** Cyrillic, Greek and Armenian letters drawn like Latin ones, paired with the Latin letter. */
const LETTERS: ReadonlyArray<readonly [string, string]> = [
  // Cyrillic
  ['а', 'a'],
  ['в', 'b'],
  ['е', 'e'],
  ['ё', 'e'],
  ['к', 'k'],
  ['м', 'm'],
  ['н', 'h'],
  ['о', 'o'],
  ['р', 'p'],
  ['с', 'c'],
  ['т', 't'],
  ['у', 'y'],
  ['х', 'x'],
  ['ѕ', 's'],
  ['і', 'i'],
  ['ї', 'i'],
  ['ј', 'j'],
  ['һ', 'h'],
  ['ԁ', 'd'],
  ['ԛ', 'q'],
  ['ԝ', 'w'],
  ['ո', 'n'],
  ['ѵ', 'v'],
  ['ɡ', 'g'],
  ['А', 'A'],
  ['В', 'B'],
  ['Е', 'E'],
  ['К', 'K'],
  ['М', 'M'],
  ['Н', 'H'],
  ['О', 'O'],
  ['Р', 'P'],
  ['С', 'C'],
  ['Т', 'T'],
  ['У', 'Y'],
  ['Х', 'X'],
  ['Ѕ', 'S'],
  ['І', 'I'],
  ['Ј', 'J'],
  ['Ԁ', 'D'],
  ['Ԛ', 'Q'],
  ['Ԝ', 'W'],
  ['Ү', 'Y'],
  // Greek
  ['α', 'a'],
  ['ε', 'e'],
  ['ι', 'i'],
  ['κ', 'k'],
  ['ν', 'v'],
  ['ο', 'o'],
  ['ρ', 'p'],
  ['τ', 't'],
  ['υ', 'u'],
  ['χ', 'x'],
  ['ϲ', 'c'],
  ['ϳ', 'j'],
  ['Α', 'A'],
  ['Β', 'B'],
  ['Ε', 'E'],
  ['Ζ', 'Z'],
  ['Η', 'H'],
  ['Ι', 'I'],
  ['Κ', 'K'],
  ['Μ', 'M'],
  ['Ν', 'N'],
  ['Ο', 'O'],
  ['Ρ', 'P'],
  ['Τ', 'T'],
  ['Υ', 'Y'],
  ['Χ', 'X'],
  ['Ϲ', 'C'],
  // Armenian
  ['օ', 'o'],
  ['ս', 'u'],
  ['հ', 'h'],
  ['ց', 'g'],
];

const MAP = new Map<string, string>(LETTERS);
for (const c of LEFT) MAP.set(c, '<');
for (const c of RIGHT) MAP.set(c, '>');
for (const c of DOUBLE_LEFTS) MAP.set(c, DOUBLE_LEFT);
for (const c of DOUBLE_RIGHTS) MAP.set(c, DOUBLE_RIGHT);
for (const c of DASHES) MAP.set(c, '-');

/**
 * A copy of `text` of the same length (UTF-16 code units) with each look-alike replaced by what it
 * imitates. Every mapped character is one BMP code unit mapped to one, so offsets line up.
 */
export function skeletonOf(text: string): string {
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    out += MAP.get(c) ?? c;
  }
  return out;
}
