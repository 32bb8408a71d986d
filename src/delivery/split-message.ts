/**
 * Splits a reply into parts of at most `maxChars`, in order, whose concatenation is the reply.
 * Each cut goes at the best place in the window: a paragraph break, else a line break, else a
 * space; never inside a fenced code block when a cut before the block is possible; never inside
 * a surrogate pair. Parts carry the reply's text only (no counters).
 */
export function splitMessage(text: string, maxChars: number): string[] {
  if (maxChars < 2) throw new RangeError('maxChars must be at least 2');
  const parts: string[] = [];
  let rest = text;
  while (rest.length > maxChars) {
    const cut = chooseCut(rest, maxChars);
    parts.push(rest.slice(0, cut));
    rest = rest.slice(cut);
  }
  if (rest.length > 0 || parts.length === 0) parts.push(rest);
  return parts;
}

/** Offsets of every ``` fence line start in `text`. */
function fenceStarts(text: string, limit: number): number[] {
  const out: number[] = [];
  const re = /(^|\n)```/g;
  for (let m = re.exec(text); m !== null && m.index <= limit; m = re.exec(text)) out.push(m.index + m[1]!.length);
  return out;
}

function chooseCut(text: string, max: number): number {
  // Never cut so that a part starts or ends half-way through a code block we could keep whole:
  // if the window ends inside an open fence, prefer the start of that block.
  const fences = fenceStarts(text, max);
  const open = fences.length % 2 === 1 ? fences[fences.length - 1]! : -1;
  const minimum = Math.floor(max / 4);
  if (open > minimum) return open;
  const window = text.slice(0, max + 1);
  for (const sep of ['\n\n', '\n', ' ']) {
    const at = window.lastIndexOf(sep, max - sep.length);
    // Keep the separator with the earlier part, so the next part starts with content.
    if (at >= minimum) return at + sep.length;
  }
  // No good place: cut hard, but not between the halves of a surrogate pair.
  const code = text.charCodeAt(max - 1);
  return code >= 0xd800 && code <= 0xdbff ? max - 1 : max;
}
