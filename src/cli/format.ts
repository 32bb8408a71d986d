/** Text formatting shared by the listing commands. */

/** An ISO time, or `-` when absent. */
export const iso = (ms: number | null): string => (ms === null ? '-' : new Date(ms).toISOString());

/** One line of at most `max` characters, whitespace collapsed. */
export function clip(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ');
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** Epoch milliseconds between 2001 and 2286: a time, not a count. */
const isEpochMs = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v) && v >= 1e12 && v < 1e13;

/**
 * `--json` output: the value as indented JSON, each time field (`at`, `*At`, holding epoch
 * milliseconds) followed by its ISO form under `<name>Iso`, so scripts keep the number and people
 * can read the time.
 */
export function jsonOutput(value: unknown): string {
  const withIso = (_key: string, v: unknown): unknown => {
    if (v === null || typeof v !== 'object' || Array.isArray(v)) return v;
    const out: Record<string, unknown> = {};
    for (const [k, field] of Object.entries(v)) {
      out[k] = field;
      if ((k === 'at' || k.endsWith('At')) && isEpochMs(field)) out[`${k}Iso`] = new Date(field).toISOString();
    }
    return out;
  };
  return `${JSON.stringify(value, withIso, 2)}\n`;
}
