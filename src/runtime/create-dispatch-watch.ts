import type { Clock } from '../common/clock.js';
import type { Log } from '../common/log.js';
import { repeatEvery } from '../common/repeat-every.js';
import type { DispatchHold, Store } from '../store/index.js';

interface DispatchWatchDeps {
  store: Pick<Store, 'listHolds'>;
  clock: Clock;
  log: Log;
  /**
   * How often the holds are read without being told: a `hookgate resume` run beside a SQLite
   * gateway writes the store from another process, whose signals do not reach this one.
   * @default 2000
   */
  pollMs?: number;
  /**
   * After every read (and when this replica's drain ends), with the holds read and whether one was
   * lifted since the last read: the loops look for the work a hold refused.
   */
  onRead: (holds: readonly DispatchHold[], lifted: boolean) => void;
}

/** This replica's view of the dispatch holds, and its own drain. */
export interface DispatchWatch {
  /** Reads the holds, then keeps them fresh. */
  start(): Promise<void>;
  stop(): void;
  /** Reads the holds now (a hold was announced, or set here). */
  refresh(): Promise<void>;
  /** The fleet's holds as last read (claims read the store itself; this is for operators). */
  holds(): readonly DispatchHold[];
  /** Whether this replica drains: it claims nothing new until resumed (or restarted). */
  draining(): boolean;
  /** Drains this replica: work in flight finishes, nothing new is claimed. */
  drain(): void;
  /** Ends this replica's drain; `false` when it was not draining. */
  undrain(): boolean;
}

const idOf = (h: DispatchHold): string => `${h.scope}\u0000${h.key}`;

/**
 * Follows the dispatch holds for the surfaces that show them (readiness, metrics, the admin API)
 * and for the work a hold's end must restart: a heartbeat asked for while its agent was held was
 * refused, and is asked for again at the first read that finds it free (a hold set and lifted
 * between two reads included). Claims never trust this copy: they read the holds in their own
 * transaction, so a hold binds the next claim of every replica at once.
 */
export function createDispatchWatch(deps: DispatchWatchDeps): DispatchWatch {
  let current: readonly DispatchHold[] = [];
  let drained = false;
  const halt = new AbortController();
  let reading: Promise<void> | undefined;

  const read = async (): Promise<void> => {
    let next: DispatchHold[];
    try {
      next = await deps.store.listHolds();
    } catch (error) {
      deps.log.warn('reading the dispatch holds failed', { err: error });
      return;
    }
    const before = new Map(current.map((h) => [idOf(h), h]));
    const after = new Map(next.map((h) => [idOf(h), h]));
    current = next;
    for (const [id, h] of after) {
      const was = before.get(id);
      if (was === undefined || was.kind !== h.kind)
        deps.log.warn('dispatch held', { scope: h.scope, key: h.key, kind: h.kind, note: h.note });
    }
    let lifted = false;
    for (const [id, h] of before) {
      if (after.has(id)) continue;
      lifted = true;
      deps.log.info('dispatch resumed', { scope: h.scope, key: h.key });
    }
    deps.onRead(current, lifted);
  };
  // One read at a time; a read asked for during one runs after it, so the last change is never missed.
  const refresh = (): Promise<void> => {
    const next = (reading ?? Promise.resolve()).then(read);
    reading = next.finally(() => {
      if (reading === guarded) reading = undefined;
    });
    const guarded = reading;
    return next;
  };

  return {
    async start() {
      await refresh();
      void repeatEvery(deps.clock, deps.pollMs ?? 2000, halt.signal, refresh);
    },
    stop: () => halt.abort(),
    refresh,
    holds: () => current,
    draining: () => drained,
    drain() {
      if (drained) return;
      drained = true;
      deps.log.warn('this replica drains: work in flight finishes, nothing new is claimed');
    },
    undrain() {
      if (!drained) return false;
      drained = false;
      deps.log.info('this replica claims work again');
      deps.onRead(current, true);
      return true;
    },
  };
}
