/** Policy: agent allow-list, session-key rules, model allow-list; fills every default. */
export { createPolicy } from './create-policy.js';
export type { AgentRequest, EventAction, EventRequest, Policy, WakeRequest } from './create-policy.js';
export { mainSessionKey, resolveDefaultAgentId } from './resolve-agent.js';
export { readRunBudgets, resolveRunBudgets } from './resolve-run-budgets.js';
export { BUILTIN_ECHO_PROVIDER, resolveModel } from '../config/index.js';
