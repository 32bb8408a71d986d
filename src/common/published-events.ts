/**
 * The names and trust rule of published occurrences (the event log, MCP Events). Shared by what
 * writes them (hooks, runtime) and what serves them (outputs/mcp-events).
 */

/** A run reached its terminal state. */
export const RUN_FINISHED = 'run.finished';

/** `hook.wake`, `hook.agent`, `hook.<mapping id>`: the occurrence a hook's request publishes. */
export function publishedHookName(hook: string): string {
  return `hook.${hook}`;
}

/**
 * Whether what an action carries came from outside the gateway with no mapping vouching for it:
 * every hook's content (a verified signature proves who sent a request, not that its text is
 * safe to put before a model), unless its mapping sets `allowUnsafeExternalContent: true`.
 */
export function isUntrusted(source: { external: boolean; allowUnsafeExternalContent: boolean }): boolean {
  return source.external && !source.allowUnsafeExternalContent;
}
