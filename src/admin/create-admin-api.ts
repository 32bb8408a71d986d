import { RequestError } from '../common/errors.js';
import type { Clock } from '../common/clock.js';
import type { Ids } from '../common/ids.js';
import type { HookHandler, HookOutcome } from '../hooks/index.js';
import { createRunFinished, createRunSummary } from '../runtime/index.js';
import {
  viewSubscription,
  type DeliveryQueue,
  type RequestLog,
  type RunControl,
  type StoreReader,
  type SubscriptionStore,
} from '../store/index.js';
import { parseDeliveryState, parseFlag, parseLimit, parseRunState, parseStatus } from './parse-admin-query.js';
import type { RequestRecorder } from './create-request-recorder.js';
import { replayRequest } from './replay-request.js';
import { found, ok, type AdminAnswer, type AdminCall, type AdminRoute } from './admin-route.js';
import { createDispatchRoutes, type DispatchAdminDeps } from './dispatch-routes.js';
import { createRelayRoutes, type RelayAdminDeps } from './relay-routes.js';

export type { AdminAnswer, AdminCall } from './admin-route.js';

interface AdminApiDeps {
  store: StoreReader &
    RequestLog &
    RunControl &
    Pick<DeliveryQueue, 'requeueDelivery'> &
    Pick<SubscriptionStore, 'listSubscriptions' | 'getSubscription' | 'terminateSubscription' | 'deleteSubscription'>;
  handleHook: HookHandler;
  /** `hooks.path` now (a reload may change it). */
  hooksPath: () => string;
  clock: Clock;
  ids: Ids;
  /** A cancelled run publishes `run.finished` (`mcp.enabled`). @default false */
  publishRuns?: boolean;
  /** Pause, resume and drain (`/dispatch`); absent, those endpoints are not served. */
  dispatch?: DispatchAdminDeps;
  /** A relay's queue or a home's pull (`/relay`); absent, that endpoint is not served. */
  relay?: RelayAdminDeps;
  /** Records real replays in the request log. */
  recorder?: RequestRecorder;
}

function describeOutcome(o: HookOutcome): Record<string, unknown> {
  switch (o.kind) {
    case 'wake':
      return { kind: 'wake', event: o.event };
    case 'agent':
      return { kind: 'agent', run: o.run };
    case 'event':
      return { kind: 'event', action: o.action, ...(o.published === undefined ? {} : { published: o.published }) };
    case 'skip':
      return { kind: 'skip' };
    case 'duplicate':
      return { kind: 'duplicate', status: o.status, body: o.body === '' ? null : (JSON.parse(o.body) as unknown) };
    case 'many':
      return {
        kind: 'many',
        items: o.items.map((i) => ({ index: i.index, identity: i.identity, action: describeOutcome(i.outcome) })),
      };
  }
}

/**
 * The admin API over plain values: `/requests`, `/runs`, `/deliveries`, `/sessions`, `/events`,
 * `/subscriptions` (never their secrets) to read; retry a delivery, cancel a queued run, replay a
 * recorded request (or dry-run it), remove a subscription.
 * Errors are `RequestError`s; the HTTP adapter turns them into answers.
 */
export function createAdminApi(deps: AdminApiDeps): (call: AdminCall) => Promise<AdminAnswer> {
  const { store } = deps;
  const routes: AdminRoute[] = [
    ...(deps.dispatch === undefined ? [] : createDispatchRoutes(deps.dispatch)),
    ...(deps.relay === undefined ? [] : createRelayRoutes(deps.relay)),
    {
      method: 'GET',
      pattern: /^\/requests$/,
      run: async (_, q) => {
        const hook = q.get('hook');
        const status = parseStatus(q);
        return ok({
          requests: await store.listRequests({
            limit: parseLimit(q),
            ...(hook ? { hook } : {}),
            ...(status === undefined ? {} : { status }),
          }),
        });
      },
    },
    {
      method: 'GET',
      pattern: /^\/requests\/([^/]+)$/,
      run: async ([id]) => ok({ request: found(await store.getRequest(id!)) }),
    },
    {
      method: 'POST',
      pattern: /^\/requests\/([^/]+)\/replay$/,
      run: async ([id], q, call) => {
        const dryRun = parseFlag(q, 'dryRun');
        const outcome = await replayRequest(deps.handleHook, found(await store.getRequest(id!)), deps.hooksPath(), {
          dryRun,
          recorder: deps.recorder,
          client: call.client,
        });
        return ok({ dryRun, action: describeOutcome(outcome) }, dryRun || outcome.kind !== 'agent' ? 200 : 202);
      },
    },
    {
      method: 'GET',
      pattern: /^\/runs$/,
      run: async (_, q) => {
        const state = parseRunState(q);
        return ok({ runs: await store.listRuns({ limit: parseLimit(q), ...(state === undefined ? {} : { state }) }) });
      },
    },
    {
      method: 'GET',
      pattern: /^\/runs\/([^/]+)$/,
      run: async ([id]) => {
        const run = found(await store.getRun(id!));
        const delivery = await store.getRunDelivery(run.id);
        return ok({ run, delivery: delivery === null ? null : await store.getDelivery(delivery.id) });
      },
    },
    {
      method: 'POST',
      pattern: /^\/runs\/([^/]+)\/cancel$/,
      run: async ([id]) => {
        const run = found(await store.getRun(id!));
        const at = deps.clock.now();
        const summary = createRunSummary(deps, run, 'failed', 'cancelled', at);
        const published =
          deps.publishRuns === true
            ? { published: createRunFinished(deps, run, { state: 'failed', reply: null, error: 'cancelled', at }) }
            : {};
        if (!(await store.cancelRun({ runId: run.id, finishedAt: at, error: 'cancelled', summary, ...published }))) {
          const now = await store.getRun(run.id);
          throw new RequestError('run_not_cancellable', {
            message: `Only a queued run can be cancelled; this one is ${now?.state ?? run.state}.`,
          });
        }
        return ok({ run: await store.getRun(run.id) });
      },
    },
    {
      method: 'GET',
      pattern: /^\/deliveries$/,
      run: async (_, q) => {
        const state = parseDeliveryState(q);
        return ok({
          deliveries: await store.listDeliveries({ limit: parseLimit(q), ...(state === undefined ? {} : { state }) }),
        });
      },
    },
    {
      method: 'GET',
      pattern: /^\/deliveries\/([^/]+)$/,
      run: async ([id]) => ok({ delivery: found(await store.getDelivery(id!)) }),
    },
    {
      method: 'POST',
      pattern: /^\/deliveries\/([^/]+)\/retry$/,
      run: async ([id]) => {
        const delivery = found(await store.getDelivery(id!));
        if (!(await store.requeueDelivery(delivery.id, deps.clock.now()))) {
          throw new RequestError('delivery_not_retryable', {
            message: `Only a failed or skipped delivery can be retried; this one is ${delivery.state}.`,
          });
        }
        return ok({ delivery: await store.getDelivery(delivery.id) });
      },
    },
    {
      method: 'GET',
      pattern: /^\/sessions$/,
      run: async (_, q) => ok({ sessions: await store.listSessions({ limit: parseLimit(q) }) }),
    },
    {
      method: 'GET',
      pattern: /^\/sessions\/([^/]+)$/,
      run: async ([key], q) => {
        const session = found(await store.getSession(key!));
        const limit = parseLimit(q);
        return ok({
          session,
          transcript: await store.readTranscript(session.key, { limit }),
          pendingEvents: await store.listPendingEvents(session.key, { limit }),
        });
      },
    },
    {
      method: 'GET',
      pattern: /^\/events$/,
      run: async (_, q) => ok({ events: await store.listSystemEvents({ limit: parseLimit(q) }) }),
    },
    {
      method: 'GET',
      pattern: /^\/subscriptions$/,
      run: async () => ok({ subscriptions: (await store.listSubscriptions()).map(viewSubscription) }),
    },
    {
      method: 'POST',
      pattern: /^\/subscriptions\/([^/]+)\/remove$/,
      run: async ([id]) => {
        const s = found(await store.getSubscription(id!));
        // One that never activated has no callback to tell; the rest get their `terminated` notice first.
        const done =
          s.state === 'activating'
            ? await store.deleteSubscription(s.id)
            : await store.terminateSubscription(s.id, 'removed', deps.clock.now());
        if (!done) throw new RequestError('subscription_ending');
        return ok({ subscription: viewSubscription((await store.getSubscription(s.id)) ?? s) });
      },
    },
  ];

  return async (call) => {
    let pathMatched = false;
    for (const route of routes) {
      const m = route.pattern.exec(call.path);
      if (m === null) continue;
      pathMatched = true;
      if (route.method !== call.method) continue;
      const params = m.slice(1).map((p) => decodeURIComponent(p));
      return route.run(params, call.query, call);
    }
    if (pathMatched) {
      throw new RequestError('method_not_allowed', { message: `${call.method} is not accepted here.` });
    }
    throw new RequestError('not_found');
  };
}
