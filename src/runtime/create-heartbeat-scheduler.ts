/** Per-agent heartbeat triggering: coalescing, one follow-up turn, a periodic tick, a pause after a flood. */
export interface HeartbeatScheduler {
  /** Asks for a turn soon. Requests within `coalesceMs` share one turn; one made during a turn causes exactly one more. */
  request(): void;
  /** Starts the periodic tick (if `everyMs` > 0). */
  start(): void;
  /** Stops ticking and waits for a running turn to end. */
  stop(): Promise<void>;
}

/** What asked for a turn since the last one: requests, the periodic tick, or both (they share one turn). */
export interface TurnAsk {
  request: boolean;
  periodic: boolean;
}

interface HeartbeatSchedulerOptions {
  /**
   * Runs one turn for what asked for it. Resolves how long, in ms, requested turns must wait after
   * it (a turn that took a flood's digest), if at all; rejects when the turn failed (its events
   * stay pending). Errors are the caller's to log.
   */
  runTurn: (ask: TurnAsk) => Promise<number | undefined>;
  everyMs: number;
  coalesceMs: number;
  /** The wait before a failed requested turn is asked for again, doubling to `retryMaxMs`. @default 5000 */
  retryFirstMs?: number;
  /** @default 300000 */
  retryMaxMs?: number;
  /** A monotonic clock in ms. @default performance.now */
  now?: () => number;
}

/**
 * Neither kind of ask is lost to the other: a periodic tick that meets requests (waiting to be
 * coalesced, or made during a turn) shares their turn as both. After a turn that asks for a pause,
 * requests wait until it is over (one turn then takes all they brought); the periodic tick does not.
 * A requested turn that failed is asked for again after `retryFirstMs`, then twice as long after
 * each failure in a row, up to `retryMaxMs`: without it a `now` wake whose turn met a model that
 * was down waited for the next wake or the periodic tick (never, with `every: 0`). Requests made
 * meanwhile wait for that retry too; the periodic tick does not.
 */
export function createHeartbeatScheduler(options: HeartbeatSchedulerOptions): HeartbeatScheduler {
  const now = options.now ?? (() => performance.now());
  let running: Promise<void> | null = null;
  let requested = false;
  let periodicDue = false;
  /** Requested turns wait until then (a flood's pause). */
  let requestsFrom = 0;
  let timer: NodeJS.Timeout | null = null;
  /** When the timer fires (on `now`'s clock). */
  let firesAt = 0;
  let tick: NodeJS.Timeout | null = null;
  let stopped = false;
  const retryFirstMs = options.retryFirstMs ?? 5_000;
  const retryMaxMs = options.retryMaxMs ?? 300_000;
  let retryMs = retryFirstMs;

  const fire = (): void => {
    timer = null;
    if (stopped) return;
    const ask = { request: requested, periodic: periodicDue };
    requested = false;
    periodicDue = false;
    running = options
      .runTurn(ask)
      .then(
        (pauseMs) => {
          retryMs = retryFirstMs;
          if (pauseMs !== undefined && pauseMs > 0) requestsFrom = now() + pauseMs;
        },
        () => {
          // Requested turns (this one's, asked for again, and any asked for meanwhile) wait out the
          // retry's delay, as after a flood's pause: a flood of wakes against a model that is down is
          // not a turn after another.
          requestsFrom = Math.max(requestsFrom, now() + retryMs);
          retryMs = Math.min(retryMaxMs, retryMs * 2);
          if (ask.request) requested = true;
        },
      )
      .finally(() => {
        running = null;
        arm();
      });
  };

  /** Sets the timer for what has asked, unless a turn runs (its end arms it). */
  const arm = (): void => {
    if (stopped || running !== null || (!requested && !periodicDue)) return;
    const t = now();
    const waitMs = periodicDue ? options.coalesceMs : Math.max(options.coalesceMs, requestsFrom - t);
    if (timer !== null) {
      // Set already, unless a periodic tick arrived during a flood's pause: it brings the turn forward.
      if (firesAt <= t + waitMs) return;
      clearTimeout(timer);
    }
    firesAt = t + waitMs;
    timer = setTimeout(fire, waitMs);
  };

  const schedule = (trigger: 'request' | 'periodic'): void => {
    if (stopped) return;
    if (trigger === 'request') requested = true;
    else periodicDue = true;
    arm();
  };

  return {
    request: () => schedule('request'),
    start() {
      if (options.everyMs > 0 && tick === null) {
        tick = setInterval(() => schedule('periodic'), options.everyMs);
        tick.unref();
      }
    },
    async stop() {
      stopped = true;
      if (timer !== null) clearTimeout(timer);
      if (tick !== null) clearInterval(tick);
      timer = null;
      tick = null;
      if (running !== null) await running;
    },
  };
}
