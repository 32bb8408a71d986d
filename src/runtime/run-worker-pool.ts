import { createCoalescedTask } from '../common/create-coalesced-task.js';
import type { Log } from '../common/log.js';
import type { RunRecord, Store } from '../store/index.js';

export interface RunWorkerPoolOptions {
  store: Store;
  log: Log;
  now: () => number;
  /** Identifies this process's claims. */
  owner: string;
  maxConcurrentRuns: number;
  /** Lease length; renewed every third of it while a run executes. */
  leaseMs: number;
  /** How often to look for work nobody announced (runs queued by a peer, requeued runs). */
  pollMs: number;
  /** Runs a claimed run; `shutdown` aborts when the pool stops and the grace period is over. */
  execute: (run: RunRecord, shutdown: AbortSignal) => Promise<unknown>;
  /** How long `stop()` lets runs finish before aborting them. @default 5000 */
  stopGraceMs?: number;
}

/**
 * Claims queued runs and executes up to `maxConcurrentRuns` at once. `notify()` wakes it when a
 * run was queued; a poll catches anything else. A failing run never stops the loop.
 */
export class RunWorkerPool {
  readonly #o: RunWorkerPoolOptions;
  readonly #active = new Map<string, Promise<void>>();
  readonly #pumpOnce = createCoalescedTask(() => this.#pump());
  #stopped = true;
  #poll: NodeJS.Timeout | undefined;
  #renew: NodeJS.Timeout | undefined;
  readonly #shutdown = new AbortController();

  constructor(options: RunWorkerPoolOptions) {
    this.#o = options;
  }

  get activeCount(): number {
    return this.#active.size;
  }

  start(): void {
    if (!this.#stopped) return;
    this.#stopped = false;
    this.#poll = setInterval(() => this.notify(), this.#o.pollMs);
    this.#renew = setInterval(() => void this.#renewLeases(), Math.max(1, Math.floor(this.#o.leaseMs / 3)));
    this.#poll.unref();
    this.#renew.unref();
    this.notify();
  }

  /** Looks for claimable runs now. */
  notify(): void {
    if (!this.#stopped) this.#pumpOnce();
  }

  /** Stops claiming, lets runs in flight finish within the grace period, then aborts the rest (they are handed back). */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearInterval(this.#poll);
    const grace = setTimeout(() => this.#shutdown.abort(new Error('shutting down')), this.#o.stopGraceMs ?? 5000);
    await Promise.allSettled([...this.#active.values()]);
    clearTimeout(grace);
    clearInterval(this.#renew);
  }

  async #pump(): Promise<void> {
    while (!this.#stopped) {
      const free = this.#o.maxConcurrentRuns - this.#active.size;
      if (free <= 0) return;
      let claimed: RunRecord[];
      try {
        claimed = await this.#o.store.claimRuns({ owner: this.#o.owner, limit: free, leaseMs: this.#o.leaseMs, now: this.#o.now() });
      } catch (error) {
        this.#o.log.error('claiming runs failed', { err: error });
        return;
      }
      if (claimed.length === 0) return;
      for (const run of claimed) this.#launch(run);
    }
  }

  #launch(run: RunRecord): void {
    const done = this.#o.execute(run, this.#shutdown.signal).then(
      () => undefined,
      (error: unknown) => this.#o.log.error('run execution failed', { runId: run.id, err: error }),
    ).finally(() => {
      this.#active.delete(run.id);
      // A finished run may unblock the next run of its session.
      this.notify();
    });
    this.#active.set(run.id, done);
  }

  async #renewLeases(): Promise<void> {
    if (this.#active.size === 0) return;
    try {
      await this.#o.store.renewLeases(this.#o.owner, [...this.#active.keys()], this.#o.now() + this.#o.leaseMs);
    } catch (error) {
      this.#o.log.error('renewing run leases failed', { err: error });
    }
  }
}
