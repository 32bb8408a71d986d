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
const STALL_MS = 5000;

/** Tracks the store's unfinished writes (a commit's sync, a batch statement, a transaction). */
export interface StallWatch {
  /** A write started; returns what `end` takes. */
  begin(): number;
  end(id: number): void;
  /** Throws `StoreStalledError` when the oldest unfinished write started more than `stallMs` ago. */
  check(): void;
}

/** Marks a write that has ended while an older one is still open (never a time `now` gives). */
const ENDED = Number.NaN;

export function createStallWatch(stallMs = STALL_MS, now: () => number = () => performance.now()): StallWatch {
  // Start times of the writes from id `head` on, oldest first, `ENDED` for one that has ended while
  // an older one is still open (writes mostly end in the order they began; any order works). An
  // array rather than a Map: emptying a long-lived Map allocates a new table in the old generation,
  // once a commit.
  const starts: number[] = [];
  let head = 0;
  let next = 0;
  return {
    begin() {
      starts.push(now());
      return next++;
    },
    end(id) {
      const at = id - head;
      if (at < 0 || at >= starts.length) return;
      starts[at] = ENDED;
      let done = 0;
      while (done < starts.length && Number.isNaN(starts[done])) done++;
      // Emptied in place when every write has ended (the usual case): no array is made per commit.
      if (done === starts.length) starts.length = 0;
      else if (done > 0) starts.splice(0, done);
      head += done;
    },
    check() {
      if (starts.length === 0) return;
      const stalled = now() - starts[0]!;
      if (stalled > stallMs) throw new StoreStalledError(stalled);
    },
  };
}
