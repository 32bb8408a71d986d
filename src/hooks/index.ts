/** Hooks: `/wake` and `/agent` payloads turned into policy-checked, durably recorded actions. */
export { buildHookAction, createHookHandler } from './create-hook-handler.js';
export type { HookHandler, HookOutcome } from './create-hook-handler.js';
export { describeOutcome } from './describe-outcome.js';
export { checkHookCall } from './check-hook-call.js';
export { idempotencyFingerprint, resolveIdempotencyKey } from './resolve-idempotency-key.js';
export type { Payload } from './read-fields.js';
export { compileMappings } from './mappings/compile-mappings.js';
export type { CompiledMapping } from './mappings/compile-mappings.js';
export { safeHeaders } from './mappings/build-mapped-request.js';
export type { MappedHookCall } from './mappings/build-mapped-request.js';
export { createTransformRunner } from './transforms/create-transform-runner.js';
