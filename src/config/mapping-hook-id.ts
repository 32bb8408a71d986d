import type { MappingConfig } from './schema.js';

/** The hook name of a user mapping: its `id`, else its place in `hooks.mappings`. */
export function mappingHookId(mapping: MappingConfig, index: number): string {
  return mapping.id ?? `mappings[${index}]`;
}
