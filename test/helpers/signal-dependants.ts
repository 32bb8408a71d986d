/**
 * How many derived signals `source` keeps for `AbortSignal.any` (Node's own bookkeeping, which
 * Node 20 never trims), or `undefined` where this Node does not expose it.
 */
export function signalDependants(source: AbortSignal): number | undefined {
  const key = Object.getOwnPropertySymbols(source).find((s) => s.description === 'kDependantSignals');
  if (key === undefined) return undefined;
  return (source as unknown as Record<symbol, Set<unknown> | undefined>)[key]?.size ?? 0;
}
