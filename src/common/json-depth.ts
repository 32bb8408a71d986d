/**
 * Nesting bounds for untrusted JSON. `JSON.parse` is iterative, but `JSON.stringify`, structured
 * clone (worker messages) and template rendering recurse: a 5,000-deep payload overflows the stack
 * there. Anything deeper than this is refused where it enters (a request body, a transform's
 * result). Real webhook payloads (GitHub, Stripe, Gmail) nest fewer than 15 levels.
 */
export const MAX_JSON_DEPTH = 100;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;

/**
 * True when JSON text opens more than `maxDepth` objects or arrays inside each other. One pass
 * over the bytes, before parsing; brackets inside strings do not count. Malformed text is left for
 * the parser to refuse.
 */
export function textExceedsJsonDepth(bytes: Uint8Array, maxDepth: number = MAX_JSON_DEPTH): boolean {
  // Each level opens with a byte of its own: text this short cannot nest that deep.
  if (bytes.length <= maxDepth) return false;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i]!;
    if (inString) {
      if (b === BACKSLASH) i++;
      else if (b === QUOTE) inString = false;
    } else if (b === QUOTE) {
      inString = true;
    } else if (b === OPEN_BRACE || b === OPEN_BRACKET) {
      if (++depth > maxDepth) return true;
    } else if (b === CLOSE_BRACE || b === CLOSE_BRACKET) {
      depth--;
    }
  }
  return false;
}

/**
 * True when a value nests objects or arrays more than `maxDepth` levels deep. Iterative, so it
 * cannot overflow the stack itself; a value reached twice (shared or cyclic) is walked once per
 * path only up to the bound.
 */
export function valueExceedsJsonDepth(value: unknown, maxDepth: number = MAX_JSON_DEPTH): boolean {
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (depth + 1 > maxDepth) return true;
    for (const child of Array.isArray(v) ? v : Object.values(v)) {
      if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
    }
  }
  return false;
}
