import type { Clock } from './clock.js';
import { createCoalescedTask } from './create-coalesced-task.js';
import type { Log } from './log.js';
import { repeatEvery } from './repeat-every.js';

export interface ClaimLoopOptions<T extends { id: string }> {
  /** Names the work in logs (`runs`, `deliveries`). */
  name: string;
  /** Claims up to `limit` items; each is then this loop's until `execute` settles. */
  claim(limit: number): Promise<T[]>;
  /**
   * Works on one claimed item; `signal` aborts at shutdown (after the grace period) or when the claim
   * is lost. `finishing()` says the item has handed its last write to the store: its place goes to
   * the next item at once, so that item's claim rides the same commit (one commit a run, not two).
   */
  execute(item: T, signal: AbortSignal, finishing: () => void): Promise<void>;
  /** Extends the leases of the items in flight; resolves with the ids still held. */
  renew(items: T[]): Promise<string[]>;
  /** Items worked on at once. */
  concurrency: number;
  /** While it says true the loop claims nothing (its replica drains); items in flight go on. */
  held?: () => boolean;
  /** How often to look for work nobody announced (another process's, retries falling due). */
  pollMs: number;
  /** How often leases are renewed while items are in flight (a third of the lease, say). */
  renewEveryMs: number;
  /** How long `stop()` lets items finish before aborting them; `null`: never abort, wait for them. */
  stopGraceMs: number | null;
  clock: Clock;
  log: Log;
}

/** A loop that claims leased work, runs it with bounded concurrency and keeps its leases alive. */
export interface ClaimLoop {
  start(): void;
  /** Looks for work now (work was announced, or an item finished). */
  notify(): void;
  /**
   * Stops claiming at once; lets items in flight (those of a claim still being answered too)
   * finish within the grace period, then aborts them.
   */
  stop(): Promise<void>;
  /** Items in flight. */
  active(): number;
  /**
   * Whether the loop runs and finished a pass (claimed, or found itself full) recently: within
   * `STALL_POLLS` polls, and at least `MIN_STALL_MS`. A claim that hangs or a poll that died is not.
   */
  isAlive(): boolean;
}

/** Polls a loop may miss before it counts as stalled; and the least time that takes. */
const STALL_POLLS = 5;
const MIN_STALL_MS = 10_000;

export class ClaimLostError extends Error {
  constructor(id: string) {
    super(`claim on ${id} was lost (its lease expired and another worker took it)`);
    this.name = 'ClaimLostError';
  }
}

interface Active<T> {
  item: T;
  abort: AbortController;
  done: Promise<void>;
  /** It called `finishing`: its place is free (its lease is still renewed until it ends). */
  finishing: boolean;
}

/**
 * The one claim loop for every kind of leased work. Time is the injected clock's, so tests drive
 * polling, renewal and the stop grace period without sleeping. A failing item is logged and never
 * stops the loop.
 */
export function createClaimLoop<T extends { id: string }>(o: ClaimLoopOptions<T>): ClaimLoop {
  const active = new Map<string, Active<T>>();
  /** Items in `active` that called `finishing`. */
  let finishing = 0;
  let stopped = true;
  let halt = new AbortController();

  const pump = async (): Promise<void> => {
    while (!stopped) {
      const free = o.concurrency - (active.size - finishing);
      if (free <= 0 || o.held?.() === true) return;
      let claimed: T[];
      try {
        claimed = await o.claim(free);
      } catch (error) {
        o.log.error(`claiming ${o.name} failed`, { err: error });
        return;
      }
      if (claimed.length === 0) return;
      for (const item of claimed) launch(item);
    }
  };
  let lastPassAt = 0;
  /** The pass under way, or the last one: `stop()` waits for a claim already sent. */
  let passing: Promise<void> = Promise.resolve();
  const pumpOnce = createCoalescedTask(() => {
    passing = (async () => {
      try {
        await pump();
      } finally {
        lastPassAt = o.clock.now();
      }
    })();
    return passing;
  });
  /** Set once the stop grace is over: an item claimed after it is aborted at once. */
  let cutShort: Error | undefined;

  const launch = (item: T): void => {
    const abort = new AbortController();
    if (cutShort !== undefined) abort.abort(cutShort);
    const entry: Active<T> = { item, abort, done: Promise.resolve(), finishing: false };
    const onFinishing = (): void => {
      if (entry.finishing || active.get(item.id) !== entry) return;
      entry.finishing = true;
      finishing++;
      loop.notify();
    };
    active.set(item.id, entry);
    entry.done = o
      .execute(item, abort.signal, onFinishing)
      .then(
        () => undefined,
        (error: unknown) => o.log.error(`${o.name} item failed unexpectedly`, { id: item.id, err: error }),
      )
      .finally(() => {
        if (entry.finishing) finishing--;
        active.delete(item.id);
        loop.notify();
      });
  };

  const renew = async (): Promise<void> => {
    // Finishing items too: their outcome may still be retried while the store cannot write, and a
    // lease that ran out meanwhile would let another worker run the item again.
    if (active.size === 0) return;
    const items = [...active.values()];
    try {
      const held = new Set(await o.renew(items.map((a) => a.item)));
      for (const a of items) {
        if (!held.has(a.item.id) && active.get(a.item.id) === a) a.abort.abort(new ClaimLostError(a.item.id));
      }
    } catch (error) {
      o.log.error(`renewing ${o.name} leases failed`, { err: error });
    }
  };

  const loop: ClaimLoop = {
    start() {
      if (!stopped) return;
      stopped = false;
      cutShort = undefined;
      lastPassAt = o.clock.now();
      halt = new AbortController();
      void repeatEvery(o.clock, o.pollMs, halt.signal, () => loop.notify());
      void repeatEvery(o.clock, o.renewEveryMs, halt.signal, renew);
      loop.notify();
    },
    notify() {
      if (!stopped) pumpOnce();
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      const graceOver = new AbortController();
      const grace =
        o.stopGraceMs === null
          ? Promise.resolve()
          : o.clock.sleep(o.stopGraceMs, graceOver.signal).then(
              () => {
                cutShort = new Error('shutting down');
                for (const a of active.values()) a.abort.abort(cutShort);
              },
              () => undefined,
            );
      // A claim already sent may still return items: they are this loop's, and finish (or are cut
      // short) like the rest, before the caller closes what they record into. Left behind, they
      // would run on unrecorded, and be claimed and sent again after a restart.
      await passing;
      // Leases stay renewed while items finish.
      await Promise.allSettled([...active.values()].map((a) => a.done));
      graceOver.abort();
      await grace;
      halt.abort();
    },
    active: () => active.size,
    isAlive: () => !stopped && o.clock.now() - lastPassAt <= Math.max(STALL_POLLS * o.pollMs, MIN_STALL_MS),
  };
  return loop;
}
