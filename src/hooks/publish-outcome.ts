import { isUntrusted, publishedHookName } from '../common/published-events.js';
import type { Ids } from '../common/ids.js';
import type { ActionSource, NewLogEvent } from '../store/index.js';
import type { HookOutcome, ItemOutcome } from './hook-outcome.js';
import type { Payload } from './read-fields.js';

/** What an occurrence carries besides its action: where the request came from. */
interface PublishContext {
  /** The request record's id, when the request log keeps one. */
  requestId: string | null;
  receivedAt: number;
  /** The request's payload, published only when `withPayload` (a `forEach` item publishes itself instead). */
  payload: Payload;
  /** The serving mapping's `publishPayload`. */
  withPayload: (source: ActionSource) => boolean;
}

function occurrence(
  ids: Ids,
  ctx: PublishContext,
  o: { source: ActionSource; agentId: string; fields: Record<string, unknown>; item?: unknown; id?: string },
): NewLogEvent {
  const untrusted = isUntrusted(o.source);
  const hook = o.source.hook;
  const raw = o.source.hook === 'wake' || o.source.hook === 'agent' || !ctx.withPayload(o.source) ? undefined : o.item;
  return {
    id: o.id ?? ids.next(),
    name: publishedHookName(hook),
    agentId: o.agentId,
    requestId: ctx.requestId,
    createdAt: ctx.receivedAt,
    data: {
      hook,
      ...o.fields,
      requestId: ctx.requestId,
      receivedAt: new Date(ctx.receivedAt).toISOString(),
      untrusted,
      ...(raw === undefined ? {} : { payload: raw }),
    },
    untrusted,
  };
}

type Single = ItemOutcome['outcome'];

function publishOne(ids: Ids, ctx: PublishContext, outcome: Single, item: unknown): Single {
  switch (outcome.kind) {
    case 'wake': {
      const e = outcome.event;
      const published = occurrence(ids, ctx, {
        source: e.source,
        agentId: e.agentId,
        item,
        fields: { action: 'wake', agentId: e.agentId, text: e.text, mode: e.mode, eventId: e.id },
      });
      return { ...outcome, event: { ...e, published } };
    }
    case 'agent': {
      const r = outcome.run;
      const published = occurrence(ids, ctx, {
        source: r.source,
        agentId: r.agentId,
        item,
        fields: {
          action: 'agent',
          agentId: r.agentId,
          name: r.name,
          message: r.message,
          sessionKey: r.sessionKey,
          runId: r.id,
        },
      });
      return { ...outcome, run: { ...r, published } };
    }
    case 'event': {
      const a = outcome.action;
      // The occurrence is the action: its id is the eventId the sender was answered with.
      const published = occurrence(ids, ctx, {
        id: a.id,
        source: a.source,
        agentId: a.agentId,
        item,
        fields: { action: 'event', agentId: a.agentId, text: a.text, eventId: a.id },
      });
      return { ...outcome, published };
    }
  }
}

/**
 * The outcome with the occurrence each of its actions publishes attached (MCP Events): data on
 * the actions the store records, written in their transaction, never a side effect of its own.
 */
export function publishOutcome(ids: Ids, ctx: PublishContext, outcome: HookOutcome): HookOutcome {
  switch (outcome.kind) {
    case 'wake':
    case 'agent':
    case 'event':
      return publishOne(ids, ctx, outcome, ctx.payload);
    case 'many': {
      return {
        ...outcome,
        items: outcome.items.map((i) => ({ ...i, outcome: publishOne(ids, ctx, i.outcome, i.item) })),
      };
    }
    default:
      return outcome;
  }
}
