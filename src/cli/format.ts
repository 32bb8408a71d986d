/** Text formatting shared by the listing commands. */

/** An ISO time, or `-` when absent. */
export const iso = (ms: number | null): string => (ms === null ? '-' : new Date(ms).toISOString());

/** One line of at most `max` characters, whitespace collapsed. */
export function clip(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ');
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}
