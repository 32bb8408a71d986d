import type { Clock } from '../common/clock.js';
import { RequestError } from '../common/errors.js';
import type { DispatchWatch } from '../runtime/index.js';
import { ALL_KEY, resolveHoldSelection, type DispatchControl, type InFlight } from '../store/index.js';
import { ok, type AdminRoute } from './admin-route.js';
import { parseFlag } from './parse-admin-query.js';

export interface DispatchAdminDeps {
  store: DispatchControl;
  /** This replica's view of the holds, and its own drain. */
  watch: DispatchWatch;
  /** This replica's work in flight. */
  replicaInFlight: () => InFlight;
  /** The agent and mapping ids a pause may name (the config's). */
  known: () => { agents: readonly string[]; mappings: readonly string[] };
  clock: Clock;
}

/** The longest note a hold keeps. */
const MAX_NOTE_CHARS = 500;

const invalid = (message: string, path = 'selector'): RequestError =>
  new RequestError('invalid_query', { message, issues: [{ path, message }] });

/**
 * `/dispatch`: the holds and the work in flight (`GET`); `POST /dispatch/pause`, `/resume` with one
 * of `?all=1`, `?agent=<id>`, `?mapping=<id>` (and `&note=` for a pause) for the fleet; `POST
 * /dispatch/drain` holds the fleet for a deploy, `?replica=1` drains only this replica (until
 * `POST /dispatch/resume?replica=1` or a restart).
 */
export function createDispatchRoutes(deps: DispatchAdminDeps): AdminRoute[] {
  const { store, watch } = deps;
  const state = async (): Promise<Record<string, unknown>> => ({
    holds: await store.listHolds(),
    replica: { draining: watch.draining(), inFlight: deps.replicaInFlight() },
    fleet: { inFlight: await store.readInFlight() },
    known: deps.known(),
  });
  const selection = async (q: URLSearchParams, resuming: boolean) => {
    const chosen = resolveHoldSelection(
      { all: parseFlag(q, 'all'), agent: q.get('agent') ?? undefined, mapping: q.get('mapping') ?? undefined },
      { ...deps.known(), ...(resuming ? { held: await store.listHolds() } : {}) },
    );
    if (!chosen.ok) throw invalid(`Query names no hold: ${chosen.message}.`);
    return chosen;
  };
  const note = (q: URLSearchParams): string | null => {
    const raw = q.get('note');
    if (raw === null || raw.trim() === '') return null;
    if (raw.length > MAX_NOTE_CHARS) throw invalid(`Query parameter note is longer than ${MAX_NOTE_CHARS}.`, 'note');
    return raw.trim();
  };
  return [
    { method: 'GET', pattern: /^\/dispatch$/, run: async () => ok(await state()) },
    {
      method: 'POST',
      pattern: /^\/dispatch\/pause$/,
      run: async (_, q) => {
        const { scope, key } = await selection(q, false);
        await store.setHold({ scope, key, kind: 'pause', note: note(q), at: deps.clock.now() });
        await watch.refresh();
        return ok(await state());
      },
    },
    {
      method: 'POST',
      pattern: /^\/dispatch\/drain$/,
      run: async (_, q) => {
        if (parseFlag(q, 'replica')) watch.drain();
        else await store.setHold({ scope: 'all', key: ALL_KEY, kind: 'drain', note: note(q), at: deps.clock.now() });
        await watch.refresh();
        return ok(await state());
      },
    },
    {
      method: 'POST',
      pattern: /^\/dispatch\/resume$/,
      run: async (_, q) => {
        let resumed: boolean;
        if (parseFlag(q, 'replica')) resumed = watch.undrain();
        else {
          const { scope, key } = await selection(q, true);
          resumed = await store.releaseHold(scope, key);
        }
        await watch.refresh();
        return ok({ resumed, ...(await state()) });
      },
    },
  ];
}
