/** Hooks: `/wake` and `/agent` payloads turned into policy-checked, durably recorded actions. */
export { createHookHandler } from './create-hook-handler.js';
export type { HookHandler, HookOutcome } from './create-hook-handler.js';
export { parseWakePayload } from './parse-wake-payload.js';
export type { WakePayload } from './parse-wake-payload.js';
export { parseAgentPayload } from './parse-agent-payload.js';
export type { AgentPayload } from './parse-agent-payload.js';
export type { Payload } from './read-fields.js';
