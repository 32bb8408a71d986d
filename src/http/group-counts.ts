/** How many groups a count holds before its groups at 0 are dropped. */
const SWEEP_AT = 1024;

/** Counts by client group (connections held, bodies being read). */
interface GroupCounts {
  get(group: string): number;
  add(group: string): void;
  /** Takes one off `group`'s count (never below 0). */
  remove(group: string): void;
  /** Groups held, those at 0 included until the next sweep. */
  readonly size: number;
}

/**
 * A group back at 0 stays in the map until it holds `sweepAt` groups, when all the zeros leave at
 * once and `sweepAt` becomes twice what is left (groups all still counted are not scanned again on
 * every new one). Taking the last key out of a long-lived Map makes V8 allocate a new table in the
 * old generation: done on every request, it was most of what filled the old generation between
 * full collections.
 */
export function createGroupCounts(sweepFloor = SWEEP_AT): GroupCounts {
  const counts = new Map<string, number>();
  let sweepAt = sweepFloor;
  return {
    get: (group) => counts.get(group) ?? 0,
    add(group) {
      const before = counts.get(group);
      if (before === undefined && counts.size >= sweepAt) {
        for (const [g, n] of counts) if (n === 0) counts.delete(g);
        sweepAt = Math.max(sweepFloor, 2 * counts.size);
      }
      counts.set(group, (before ?? 0) + 1);
    },
    remove(group) {
      const n = counts.get(group);
      if (n !== undefined && n > 0) counts.set(group, n - 1);
    },
    get size() {
      return counts.size;
    },
  };
}
