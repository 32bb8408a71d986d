import type { Clock } from '../common/clock.js';
import type { ErrorCode } from '../common/errors.js';

/** What `/readyz` answers: ready, or why not. */
type Readiness =
  | { ok: true }
  | { ok: false; code: Extract<ErrorCode, 'unavailable' | 'store_unavailable' | 'worker_stalled'>; reason: string };

export interface ReadinessDeps {
  /** One small durable write; rejects when the store cannot write. */
  probeWrite: () => Promise<void>;
  /** False while starting and shutting down. */
  isStarted: () => boolean;
  /** Background loops that must be making progress (runs, deliveries). */
  loops: ReadonlyArray<{ name: string; isAlive: () => boolean }>;
  clock: Clock;
  /** How long a probe's result serves readiness checks. @default 1000 */
  cacheMs?: number;
  /** A probe not done by then counts as a failure (it keeps running; the next check waits for it). @default 2000 */
  timeoutMs?: number;
  /**
   * What every answer carries beside `ok` (the dispatch holds): a paused gateway is ready, since it
   * accepts and stores requests, and says what it holds.
   */
  detail?: () => Readonly<Record<string, unknown>>;
}

type ProbeResult = { ok: true } | { ok: false; reason: string };

/** The driver's words for a failed write (`database or disk is full`, `database is locked`), never more than one line. */
const describe = (error: unknown): string => {
  const e = error as { code?: unknown; message?: unknown };
  const message = typeof e?.message === 'string' ? e.message.split('\n')[0]! : String(error);
  return typeof e?.code === 'string' ? `${e.code}: ${message}` : message;
};

/**
 * Readiness that tells the truth: the store takes a write (a probe through the same path as
 * every write, at most one in flight, its result cached for `cacheMs` on the injected clock, with
 * a timeout) and every worker loop is alive.
 */
export function createReadiness(deps: ReadinessDeps): () => Promise<Readiness> {
  const cacheMs = deps.cacheMs ?? 1000;
  const timeoutMs = deps.timeoutMs ?? 2000;
  let cached: { at: number; result: ProbeResult } | undefined;
  let inFlight: Promise<ProbeResult> | undefined;

  const probe = (): Promise<ProbeResult> => {
    inFlight ??= deps
      .probeWrite()
      .then(
        (): ProbeResult => ({ ok: true }),
        (error: unknown): ProbeResult => ({ ok: false, reason: `store cannot write: ${describe(error)}` }),
      )
      .then((result) => {
        cached = { at: deps.clock.now(), result };
        inFlight = undefined;
        return result;
      });
    const timedOut = new AbortController();
    const timeout = deps.clock.sleep(timeoutMs, timedOut.signal).then(
      (): ProbeResult => ({ ok: false, reason: `store write probe did not finish within ${timeoutMs} ms` }),
      (): ProbeResult => ({ ok: true }),
    );
    return Promise.race([inFlight, timeout]).finally(() => timedOut.abort());
  };

  const check = async (): Promise<Readiness> => {
    if (!deps.isStarted())
      return { ok: false, code: 'unavailable', reason: 'the gateway is starting or shutting down' };
    const fresh = cached !== undefined && deps.clock.now() - cached.at < cacheMs ? cached.result : await probe();
    if (!fresh.ok) return { ok: false, code: 'store_unavailable', reason: fresh.reason };
    const stalled = deps.loops.find((l) => !l.isAlive());
    if (stalled !== undefined)
      return { ok: false, code: 'worker_stalled', reason: `the ${stalled.name} loop has stopped making progress` };
    return { ok: true };
  };
  return async () => {
    const answer = await check();
    return deps.detail === undefined ? answer : { ...answer, ...deps.detail() };
  };
}
