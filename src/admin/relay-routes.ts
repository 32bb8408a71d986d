import { RequestError } from '../common/errors.js';
import type { RelayQueue, RelayState } from '../store/index.js';
import { found, ok, type AdminRoute } from './admin-route.js';
import { parseLimit } from './parse-admin-query.js';

/** What the admin API shows of a relay (its queue) or of a home (its pull). */
export type RelayAdminDeps =
  | { role: 'relay'; store: Pick<RelayQueue, 'readRelayBacklog' | 'listRelayRequests' | 'requeueRelayRequest'> }
  | { role: 'home'; url: string; status: () => Record<string, unknown> };

const STATES: readonly RelayState[] = ['pending', 'done', 'dead'];

/**
 * `GET /relay`: on a relay, its backlog (pending, leased, dead, the oldest pending request's age),
 * its dead letters with their reasons, and its latest requests (`?state=`, `?limit=`); on a home,
 * its pull (the relay, whether it answers, since when it fails, what came of what it pulled).
 * `POST /relay/requests/<id>/requeue` puts a dead letter back in the relay's queue.
 */
export function createRelayRoutes(deps: RelayAdminDeps): AdminRoute[] {
  if (deps.role === 'home')
    return [
      {
        method: 'GET',
        pattern: /^\/relay$/,
        run: async () => ok({ role: 'home', pull: { url: deps.url, ...deps.status() } }),
      },
    ];
  const { store } = deps;
  return [
    {
      method: 'GET',
      pattern: /^\/relay$/,
      run: async (_, q) => {
        const raw = q.get('state');
        if (raw !== null && raw !== '' && !(STATES as readonly string[]).includes(raw))
          throw new RequestError('invalid_query', {
            message: `Query parameter state is invalid: one of ${STATES.join(', ')}`,
            issues: [{ path: 'state', message: `one of ${STATES.join(', ')}` }],
          });
        const state = raw === null || raw === '' ? undefined : (raw as RelayState);
        const limit = parseLimit(q);
        return ok({
          role: 'relay',
          backlog: await store.readRelayBacklog(),
          dead: await store.listRelayRequests({ state: 'dead', limit }),
          requests: await store.listRelayRequests({ limit, ...(state === undefined ? {} : { state }) }),
        });
      },
    },
    {
      method: 'POST',
      pattern: /^\/relay\/requests\/([^/]+)\/requeue$/,
      run: async ([id]) => {
        if (!(await store.requeueRelayRequest(id!))) {
          found((await store.listRelayRequests({ limit: 500 })).find((r) => r.id === id) ?? null);
          throw new RequestError('relay_not_requeueable');
        }
        return ok({ requeued: true, backlog: await store.readRelayBacklog() });
      },
    },
  ];
}
