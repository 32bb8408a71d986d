import type { z } from 'zod';

/** The parts of a zod 4 schema's definition that lead to the keys below it. */
interface Def {
  type: string;
  shape?: Record<string, z.ZodType>;
  innerType?: z.ZodType;
  in?: z.ZodType;
  element?: z.ZodType;
  valueType?: z.ZodType;
  options?: z.ZodType[];
}
const defOf = (schema: z.ZodType): Def => (schema as unknown as { _zod: { def: Def } })._zod.def;

/** The object schema `schema` is, once optional, default, nullable and pipe wrappers are taken off. */
function unwrap(schema: z.ZodType): z.ZodType {
  let s = schema;
  for (let depth = 0; depth < 16; depth++) {
    const def = defOf(s);
    const inner = def.innerType ?? (def.type === 'pipe' ? def.in : undefined);
    if (inner === undefined) return s;
    s = inner;
  }
  return s;
}

/** The keys an object at `path` of `schema` may have, or none when the path leads to no object. */
export function keysAt(schema: z.ZodType, path: readonly PropertyKey[]): string[] {
  let s: z.ZodType | undefined = unwrap(schema);
  for (const segment of path) {
    if (s === undefined) return [];
    const def = defOf(s);
    if (def.type === 'object') s = def.shape?.[String(segment)];
    else if (def.type === 'array') s = def.element;
    else if (def.type === 'record') s = def.valueType;
    else if (def.type === 'union') s = def.options?.find((o) => defOf(unwrap(o)).type === 'object');
    else return [];
    if (s !== undefined) s = unwrap(s);
  }
  if (s === undefined) return [];
  const def = defOf(s);
  return def.type === 'object' ? Object.keys(def.shape ?? {}) : [];
}

/** Edit distance (insertions, deletions, substitutions), case-insensitive. */
function distance(a: string, b: string): number {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  let row = Array.from({ length: y.length + 1 }, (_, j) => j);
  for (let i = 1; i <= x.length; i++) {
    const next = [i];
    for (let j = 1; j <= y.length; j++)
      next[j] = Math.min(row[j]! + 1, next[j - 1]! + 1, row[j - 1]! + (x[i - 1] === y[j - 1] ? 0 : 1));
    row = next;
  }
  return row[y.length]!;
}

/** The known key `key` was most likely meant to be: within a third of its length in edits (at least one). */
export function suggestKey(key: string, known: readonly string[]): string | undefined {
  const limit = Math.max(1, Math.floor(key.length / 3));
  let best: { key: string; d: number } | undefined;
  for (const k of known) {
    const d = distance(key, k);
    if (d <= limit && (best === undefined || d < best.d)) best = { key: k, d };
  }
  return best?.key;
}
