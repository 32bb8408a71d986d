/** Hooks: `/wake` and `/agent` payloads turned into policy-checked, durably recorded actions. */
export { buildHookAction, createHookHandler } from './create-hook-handler.js';
export type { HookActionDeps, HookHandler, HookOutcome } from './create-hook-handler.js';
export { describeOutcome } from './describe-outcome.js';
export { resolveIdempotencyKey } from './resolve-idempotency-key.js';
export { parseWakePayload } from './parse-wake-payload.js';
export type { WakePayload } from './parse-wake-payload.js';
export { parseAgentPayload } from './parse-agent-payload.js';
export type { AgentPayload } from './parse-agent-payload.js';
export type { Payload } from './read-fields.js';
export { compileMappings, matchMapping, RESERVED_HOOK_NAMES } from './mappings/compile-mappings.js';
export type { CompiledMapping } from './mappings/compile-mappings.js';
export { renderTemplate } from './mappings/render-template.js';
export type { TemplateContext } from './mappings/render-template.js';
export { safeHeaders } from './mappings/build-mapped-request.js';
export type { MappedHookCall } from './mappings/build-mapped-request.js';
export { createTransformRunner, TransformError } from './transforms/create-transform-runner.js';
export type { TransformInput, TransformRunner, WorkerTransformRunner } from './transforms/create-transform-runner.js';
