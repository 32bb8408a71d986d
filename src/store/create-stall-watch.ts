import { performance } from 'node:perf_hooks';

/**
 * The store could not finish a write it took `stalledMs` ago (a disk that stopped syncing, a
 * database that stopped answering): a new write is refused at once rather than queued behind it.
 * Nothing of it was recorded; the ingress answers 503 `store_unavailable` (see is-store-unavailable.ts).
 */
export class StoreStalledError extends Error {
  readonly code = 'HOOKGATE_STORE_STALLED';
  constructor(stalledMs: number) {
    super(`the store has not finished a write it took ${Math.round(stalledMs)} ms ago`);
    this.name = 'StoreStalledError';
  }
}

/** How long the oldest unfinished write may have been under way before new ingress writes are refused. */
export const STALL_MS = 5000;

/** Tracks the store's unfinished writes (a commit's sync, a batch statement, a transaction). */
export interface StallWatch {
  /** A write started; returns what `end` takes. */
  begin(): number;
  end(id: number): void;
  /** Throws `StoreStalledError` when the oldest unfinished write started more than `stallMs` ago. */
  check(): void;
}

export function createStallWatch(stallMs = STALL_MS, now: () => number = () => performance.now()): StallWatch {
  /** Start times by id, oldest first (writes mostly end in the order they began; any order works). */
  const open = new Map<number, number>();
  let next = 0;
  /** When the oldest unfinished write started: kept as writes begin and end, so `check` (every ingress write) reads no map. */
  let oldestAt = 0;
  return {
    begin() {
      const id = next++;
      const at = now();
      if (open.size === 0) oldestAt = at;
      open.set(id, at);
      return id;
    },
    end(id) {
      const wasOldest = open.keys().next().value === id;
      open.delete(id);
      if (wasOldest && open.size > 0) oldestAt = open.values().next().value!;
    },
    check() {
      if (open.size === 0) return;
      const stalled = now() - oldestAt;
      if (stalled > stallMs) throw new StoreStalledError(stalled);
    },
  };
}
