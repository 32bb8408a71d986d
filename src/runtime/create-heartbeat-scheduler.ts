/** Per-agent heartbeat triggering: coalescing, one follow-up turn, a periodic tick. */
export interface HeartbeatScheduler {
  /** Asks for a turn soon. Requests within `coalesceMs` share one turn; one made during a turn causes exactly one more. */
  request(): void;
  /** Starts the periodic tick (if `everyMs` > 0). */
  start(): void;
  /** Stops ticking and waits for a running turn to end. */
  stop(): Promise<void>;
}

export interface HeartbeatSchedulerOptions {
  /** Runs one turn; `periodic` tells a tick from a request. Errors are the caller's to log. */
  runTurn: (trigger: 'request' | 'periodic') => Promise<void>;
  everyMs: number;
  coalesceMs: number;
}

export function createHeartbeatScheduler(options: HeartbeatSchedulerOptions): HeartbeatScheduler {
  let running: Promise<void> | null = null;
  let again = false;
  let pendingTrigger: 'request' | 'periodic' = 'request';
  let timer: NodeJS.Timeout | null = null;
  let tick: NodeJS.Timeout | null = null;
  let stopped = false;

  const fire = (): void => {
    timer = null;
    if (stopped) return;
    const trigger = pendingTrigger;
    pendingTrigger = 'request';
    running = options.runTurn(trigger).catch(() => undefined).finally(() => {
      running = null;
      if (again && !stopped) {
        again = false;
        schedule('request');
      }
    });
  };

  const schedule = (trigger: 'request' | 'periodic'): void => {
    if (stopped) return;
    if (trigger === 'request') pendingTrigger = 'request';
    else if (timer === null) pendingTrigger = 'periodic';
    if (running !== null) {
      again = true;
      return;
    }
    if (timer !== null) return;
    timer = setTimeout(fire, options.coalesceMs);
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
