import type { RunBudget, RunBudgets } from '../store/index.js';
import { type BudgetConfig, type Config, mappingHookId } from '../config/index.js';
import { resolveDefaultAgentId } from './resolve-agent.js';

/** The fields of a budget that are set; `null` when none is. */
function present(budget: BudgetConfig): RunBudget | null {
  const entries = Object.entries(budget).filter(([, v]) => v !== undefined);
  return entries.length === 0 ? null : (Object.fromEntries(entries) as RunBudget);
}

/**
 * The run budgets a config sets: each agent's (`agents.defaults.budget` under the agent's own,
 * field by field, for every listed agent and the default one) and each mapping's. `undefined`
 * when none is set, so claims count nothing.
 */
export function resolveRunBudgets(config: Config): RunBudgets | undefined {
  const agents: Record<string, RunBudget> = {};
  const hooks: Record<string, RunBudget> = {};
  const ids = new Set([...config.agents.list.map((a) => a.id), resolveDefaultAgentId(config.agents)]);
  for (const id of ids) {
    const own = config.agents.list.find((a) => a.id === id)?.budget;
    const budget = present({ ...config.agents.defaults.budget, ...own });
    if (budget !== null) agents[id] = budget;
  }
  config.hooks.mappings.forEach((m, i) => {
    const budget = m.budget === undefined ? null : present(m.budget);
    if (budget !== null) hooks[mappingHookId(m, i)] = budget;
  });
  return Object.keys(agents).length + Object.keys(hooks).length === 0 ? undefined : { agents, hooks };
}

/** `resolveRunBudgets` of whatever config `current` returns, worked out again only when that config changes. */
export function readRunBudgets(current: () => Config): () => RunBudgets | undefined {
  let seen: Config | null = null;
  let budgets: RunBudgets | undefined;
  return () => {
    const config = current();
    if (config !== seen) {
      seen = config;
      budgets = resolveRunBudgets(config);
    }
    return budgets;
  };
}
