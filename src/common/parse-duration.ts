const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/**
 * Parses a duration such as `30m`, `1h30m`, `45s`, `500ms` or `0` into milliseconds.
 * Returns `null` when the text is not a duration, or one too long to be a number (digits past
 * what a double holds): never `Infinity` or `NaN`.
 */
export function parseDurationMs(text: string | number): number | null {
  if (text === 0 || text === '0') return 0;
  if (typeof text === 'number') return null;
  const re = /(\d+(?:\.\d+)?)(ms|s|m|h|d)/gy;
  let total = 0;
  let consumed = 0;
  const trimmed = text.trim();
  for (let m = re.exec(trimmed); m !== null; m = re.exec(trimmed)) {
    total += Number(m[1]) * UNIT_MS[m[2]!]!;
    consumed = re.lastIndex;
  }
  if (consumed === 0 || consumed !== trimmed.length || !Number.isFinite(total)) return null;
  return Math.round(total);
}
