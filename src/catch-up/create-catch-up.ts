import { parseDurationMs } from '../common/parse-duration.js';
import { repeatEvery } from '../common/repeat-every.js';
import { mappingHookId, trimSlashes, type LoadedConfig } from '../config/index.js';
import { createGithubSource } from './create-github-source.js';
import { createStripeSource } from './create-stripe-source.js';
import {
  runCatchUpPass,
  type CatchUpPassDeps,
  type CatchUpReport,
  type CatchUpTarget,
  type PassOptions,
} from './run-catch-up-pass.js';

/** How often the scheduler looks for a mapping whose pass is due. */
const TICK_MS = 5_000;
/** After a failed pass, the next one waits at most this long (a provider that was down, a store that failed). */
const RETRY_MS = 60_000;

/** A catch-up mapping as configured now, and how often its pass runs (0: at start and by hand only). */
interface ScheduledTarget extends CatchUpTarget {
  everyMs: number;
}

/**
 * The catch-up mappings of a config that have their token: each with its provider's source, the
 * hook name its events are handled as, and its schedule. A mapping whose `tokenEnv` is unset has
 * none (a warning when the config was read); with `hooks.enabled: false`, no mapping has one.
 */
export function catchUpTargets(loaded: LoadedConfig): ScheduledTarget[] {
  const out: ScheduledTarget[] = [];
  // The door is closed: nothing would be let in through it, caught up or not.
  if (!loaded.config.hooks.enabled) return out;
  loaded.config.hooks.mappings.forEach((m, i) => {
    const c = m.catchUp;
    const mappingId = mappingHookId(m, i);
    const token = loaded.catchUpTokens.get(mappingId);
    if (c === undefined || token === undefined || m.match?.path === undefined) return;
    out.push({
      mappingId,
      hookName: trimSlashes(m.match.path),
      source: c.provider === 'github' ? createGithubSource(c, token) : createStripeSource(c, token),
      redeliver: c.provider === 'github' && c.redeliver,
      maxEvents: c.maxEvents,
      everyMs: parseDurationMs(c.every) ?? 0,
    });
  });
  return out;
}

interface CatchUpDeps extends CatchUpPassDeps {
  /** The catch-up mappings as configured now (a reload may change them). */
  targets: () => ScheduledTarget[];
  /** Sees every pass's report (logs, metrics). */
  onReport?: (report: CatchUpReport) => void;
}

/** Catching up after downtime: a pass per mapping at start, then every `every`, and on demand. */
export interface CatchUp {
  /** Runs a pass of every mapping soon, then keeps each on its schedule. */
  start(): void;
  /** Stops scheduling; a pass under way is cut short and saves where it stopped. */
  stop(): Promise<void>;
  /** Runs a pass now of one mapping (or each); resolves with the reports. Unknown mapping: none. */
  runNow(mappingId?: string, options?: Omit<PassOptions, 'signal'>): Promise<CatchUpReport[]>;
}

/**
 * Passes run one at a time in a process (one mapping after another), and one at a time per mapping
 * across a fleet (the store's lease): every replica schedules them, and the one that takes the lease
 * does the pass. A pass cut short by `maxEvents` is followed by the next at once; a failed one is
 * tried again within `RETRY_MS`.
 */
export function createCatchUp(deps: CatchUpDeps): CatchUp {
  const halt = new AbortController();
  const due = new Map<string, number>();
  let running: Promise<unknown> = Promise.resolve();
  let loop: Promise<void> | undefined;

  /** Runs `fn` after the pass under way, so passes never overlap in this process. */
  const serial = <T>(fn: () => Promise<T>): Promise<T> => {
    const next = running.then(fn, fn);
    running = next.catch(() => undefined);
    return next;
  };
  const runOne = async (t: ScheduledTarget, options: Omit<PassOptions, 'signal'> = {}): Promise<CatchUpReport> => {
    const report = await runCatchUpPass(deps, t, { ...options, signal: halt.signal });
    const now = deps.clock.now();
    if (report.outcome === 'failed') due.set(t.mappingId, now + Math.min(RETRY_MS, t.everyMs || RETRY_MS));
    else if (report.truncated) due.set(t.mappingId, now);
    else due.set(t.mappingId, t.everyMs > 0 ? now + t.everyMs : Number.POSITIVE_INFINITY);
    deps.onReport?.(report);
    return report;
  };
  const tick = async (): Promise<void> => {
    for (const t of deps.targets()) {
      if (halt.signal.aborted) return;
      if ((due.get(t.mappingId) ?? 0) > deps.clock.now()) continue;
      await runOne(t);
    }
  };

  return {
    start() {
      if (loop !== undefined) return;
      void serial(tick);
      loop = repeatEvery(deps.clock, TICK_MS, halt.signal, () => serial(tick));
    },
    async stop() {
      halt.abort();
      await loop;
      await running;
    },
    runNow(mappingId, options) {
      const targets = deps.targets().filter((t) => mappingId === undefined || t.mappingId === mappingId);
      return serial(async () => {
        const reports: CatchUpReport[] = [];
        for (const t of targets) reports.push(await runOne(t, options));
        return reports;
      });
    },
  };
}
