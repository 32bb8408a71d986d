/**
 * Cursors are opaque to clients and built on the event log's sequence: `hg1.<seq>` is the position
 * after the occurrence numbered `seq`, so "resume after what I saw" is exact.
 */
const PATTERN = /^hg1\.(0|[1-9][0-9]{0,15})$/;

export function encodeCursor(seq: number): string {
  return `hg1.${seq}`;
}

/** The position a cursor names, or `null` when it is not one of ours. */
export function decodeCursor(cursor: string): number | null {
  const m = PATTERN.exec(cursor);
  if (m === null) return null;
  const seq = Number(m[1]);
  return Number.isSafeInteger(seq) ? seq : null;
}
