/** Configuration: one JSON5 file, `${ENV}` substitution, one schema, every issue with its dot-path. */
export * from './schema.js';
export { readConfig, resolveConfigPath, safeParseConfig } from './load-config.js';
export type { Env, LoadedConfig } from './load-config.js';
export { writeDefaultConfig } from './write-default-config.js';
export { BUILTIN_ECHO_PROVIDER, FALLBACK_MODEL, resolveModel } from './resolve-model.js';
export { isPlainRelative, RESERVED_HOOK_NAMES, trimSlashes } from './check-mapping-rules.js';
export { GENERATED_SESSION_PREFIX } from './check-config-rules.js';
export { restartOnlyChanges } from './restart-only-changes.js';
export { checkBind } from './check-bind.js';
export type { BindCheckDeps } from './check-bind.js';
export { listConfigSecrets } from './list-config-secrets.js';
export { mappingHookId } from './mapping-hook-id.js';
