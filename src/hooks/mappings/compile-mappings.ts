import type { IncomingHttpHeaders } from 'node:http';
import { resolve } from 'node:path';
import type { Issue } from '../../common/errors.js';
import { mappingHookId, trimSlashes, type HooksConfig, type MappingConfig } from '../../config/index.js';

export { isPlainRelative, RESERVED_HOOK_NAMES, trimSlashes } from '../../config/index.js';
import type { TransformSpec } from '../transforms/transform-types.js';
import { createPresets } from './presets.js';

/** A mapping ready to match: normalised match values, where it came from, its transform file. */
export interface CompiledMapping {
  /** `mapping.id`, else `mappings[<i>]`; presets use their name. */
  id: string;
  mapping: MappingConfig;
  matchPath: string | undefined;
  matchSource: string | undefined;
  /** `match.headers`: lower-cased names, each with the values it accepts. */
  matchHeaders: ReadonlyArray<readonly [string, ReadonlySet<string>]> | undefined;
  transform: TransformSpec | undefined;
  validate: ((payload: Record<string, unknown>) => Issue[]) | undefined;
}

/** Time a transform may take before the request fails. @default 5000 */
export const DEFAULT_TRANSFORM_TIMEOUT_MS = 5_000;
/** Memory cap of a mapping's transform process. @default 128 */
export const DEFAULT_TRANSFORM_MAX_MEMORY_MB = 128;

function compile(
  mapping: MappingConfig,
  id: string,
  hooks: HooksConfig,
  transformsDir: string,
  validate?: CompiledMapping['validate'],
): CompiledMapping {
  const t = mapping.transform;
  return {
    id,
    mapping,
    matchPath: mapping.match?.path === undefined ? undefined : trimSlashes(mapping.match.path),
    matchSource: mapping.match?.source,
    matchHeaders:
      mapping.match?.headers === undefined
        ? undefined
        : Object.entries(mapping.match.headers).map(
            ([name, v]) => [name.toLowerCase(), new Set(typeof v === 'string' ? [v] : v)] as const,
          ),
    transform:
      t === undefined
        ? undefined
        : {
            key: id,
            file: resolve(transformsDir, t.module),
            exportName: t.export ?? 'default',
            timeoutMs: t.timeoutMs ?? DEFAULT_TRANSFORM_TIMEOUT_MS,
            maxMemoryMb: t.maxMemoryMb ?? DEFAULT_TRANSFORM_MAX_MEMORY_MB,
            maxResultBytes: hooks.maxBodyBytes,
            env: t.env ?? {},
          },
    validate,
  };
}

/** User mappings first, in order, then the enabled presets. */
export function compileMappings(hooks: HooksConfig, transformsDir: string): CompiledMapping[] {
  const user = hooks.mappings.map((m, i) => compile(m, mappingHookId(m, i), hooks, transformsDir));
  const presets = createPresets(hooks).map((p) =>
    compile(p.mapping, p.mapping.id ?? 'preset', hooks, transformsDir, p.validate),
  );
  return [...user, ...presets];
}

/**
 * The first mapping whose `match.path` equals the hook name (slashes trimmed, case-sensitive) and
 * whose `match.source` equals the payload's string `source`; an absent criterion always holds.
 */
export function matchMapping(
  mappings: readonly CompiledMapping[],
  name: string,
  payload: Record<string, unknown>,
  headers: IncomingHttpHeaders = {},
): CompiledMapping | undefined {
  const path = trimSlashes(name);
  const source = payload['source'];
  return mappings.find(
    (m) =>
      (m.matchPath === undefined || m.matchPath === path) &&
      (m.matchSource === undefined || (typeof source === 'string' && source === m.matchSource)) &&
      (m.matchHeaders === undefined || m.matchHeaders.every(([h, values]) => headerMatches(headers[h], values))),
  );
}

/** A header (as `node:http` gives it: a string, a list for repeated headers, or absent) holds one of `values`. */
function headerMatches(value: string | string[] | undefined, values: ReadonlySet<string>): boolean {
  if (value === undefined) return false;
  return typeof value === 'string' ? values.has(value) : value.some((v) => values.has(v));
}
