/**
 * `port: "${PORT}"` is a string once substituted, but the schema wants a number: environment
 * variables only hold text. Where validation expected a number or a boolean at a path whose value
 * came from the environment, the text is converted, and only there: a token of digits stays text.
 */
export interface TypeMismatch {
  /** Path segments, as the validator reports them. */
  path: readonly PropertyKey[];
  expected: 'number' | 'boolean';
}

const NUMBER = /^-?(?:\d+|\d*\.\d+)(?:e[+-]?\d+)?$/i;

/** The value the text stands for, or `undefined` when it is not one. */
function coerceText(text: string, expected: TypeMismatch['expected']): number | boolean | undefined {
  const t = text.trim();
  if (expected === 'number') return NUMBER.test(t) ? Number(t) : undefined;
  if (t === 'true' || t === '1') return true;
  if (t === 'false' || t === '0') return false;
  return undefined;
}

/** `['hooks', 'mappings', 0, 'deliver']` → `hooks.mappings[0].deliver`, the form `substituteEnv` records. */
export function dotPath(segments: readonly PropertyKey[]): string {
  let out = '';
  for (const s of segments) {
    if (typeof s === 'number') out += `[${s}]`;
    else out += out === '' ? String(s) : `.${String(s)}`;
  }
  return out;
}

/**
 * Converts, in place, each mismatched value that came from the environment and reads as the
 * expected type. Returns how many were converted (0: parsing again would change nothing).
 */
export function coerceEnvValues(
  doc: unknown,
  mismatches: readonly TypeMismatch[],
  substituted: ReadonlySet<string>,
): number {
  let changed = 0;
  for (const m of mismatches) {
    if (!substituted.has(dotPath(m.path)) || m.path.length === 0) continue;
    let parent: unknown = doc;
    for (const seg of m.path.slice(0, -1)) {
      parent =
        parent !== null && typeof parent === 'object' ? (parent as Record<PropertyKey, unknown>)[seg] : undefined;
    }
    if (parent === null || typeof parent !== 'object') continue;
    const key = m.path[m.path.length - 1]!;
    const current = (parent as Record<PropertyKey, unknown>)[key];
    if (typeof current !== 'string') continue;
    const value = coerceText(current, m.expected);
    if (value === undefined) continue;
    (parent as Record<PropertyKey, unknown>)[key] = value;
    changed += 1;
  }
  return changed;
}
