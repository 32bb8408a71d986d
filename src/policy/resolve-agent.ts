import type { AgentsConfig } from '../config/index.js';

/** The id of the agent used when none is named: `default: true`, else the first listed, else `main`. */
export function resolveDefaultAgentId(agents: AgentsConfig): string {
  return (agents.list.find((a) => a.default === true) ?? agents.list[0])?.id ?? 'main';
}

/** An agent id as requested, or the default agent when the id is unknown (spec rule 3). */
export function resolveAgentId(agents: AgentsConfig, requested: string | undefined): string {
  if (requested !== undefined && agents.list.some((a) => a.id === requested)) return requested;
  return resolveDefaultAgentId(agents);
}

/** Key of an agent's main session. */
export function mainSessionKey(agentId: string): string {
  return `agent:${agentId}:main`;
}

/**
 * Whether explicit routing to `resolvedId` is allowed: `allowedAgentIds` omitted or holding `*`
 * allows any agent; an empty list denies every explicit `agentId`.
 */
export function isAgentAllowed(allowed: readonly string[] | undefined, resolvedId: string): boolean {
  if (allowed === undefined || allowed.includes('*')) return true;
  return allowed.includes(resolvedId);
}
