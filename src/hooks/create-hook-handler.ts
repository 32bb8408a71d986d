import type { Clock } from '../common/clock.js';
import { RequestError } from '../common/errors.js';
import type { Ids } from '../common/ids.js';
import type { AgentRequest, EventRequest, Policy, WakeRequest } from '../policy/index.js';
import {
  DuplicateRequestError,
  type ActionSource,
  type IdempotencyRecord,
  type IngressStore,
  type NewLogEvent,
} from '../store/index.js';
import { describeOutcome } from './describe-outcome.js';
import type { HookOutcome, ItemOutcome } from './hook-outcome.js';
import { boundKey, idempotencyFingerprint, resolveIdempotencyKey } from './resolve-idempotency-key.js';
import { parseAgentPayload } from './parse-agent-payload.js';
import { parseWakePayload } from './parse-wake-payload.js';
import { buildMappedRequest, type MappedHookCall } from './mappings/build-mapped-request.js';
import type { CompiledMapping } from './mappings/compile-mappings.js';
import type { TransformRunner } from './transforms/create-transform-runner.js';
import { publishOutcome } from './publish-outcome.js';
import { checkBuiltinAuthentication } from './check-hook-call.js';

export type { HookOutcome } from './hook-outcome.js';

/**
 * Handles a hook call: `name` is the path after `hooks.path`, `payload` the parsed JSON object.
 * `ingress` replaces the store for this call (the request log's, or a dry run's that keeps nothing).
 */
export type HookHandler = (call: MappedHookCall, ingress?: IngressStore) => Promise<HookOutcome>;

const source = (hook: string): ActionSource => ({ hook, external: true, allowUnsafeExternalContent: false });
const WAKE_SOURCE = source('wake');
const AGENT_SOURCE = source('agent');

/** What building an action needs: everything but the store. */
interface HookActionDeps {
  policy: Policy;
  clock: Clock;
  /** User mappings, then presets. */
  mappings: readonly CompiledMapping[];
  runTransform: TransformRunner;
  /** Cap on a `waitForCompletion` wait (`hooks.maxWaitSeconds`). @default 120 */
  maxWaitSeconds?: number;
}

/** Publishing to the event log (`mcp.enabled`): every recorded action carries its occurrence. */
interface PublishDeps {
  ids: Ids;
}

/**
 * Builds the action a hook call stands for, policy applied and every default filled, without
 * recording it: the gateway records what this returns; `hookgate mappings test` only prints it.
 */
export async function buildHookAction(deps: HookActionDeps, call: MappedHookCall): Promise<HookOutcome> {
  const { policy } = deps;
  checkBuiltinAuthentication(call);
  const wake = (request: WakeRequest): HookOutcome => ({ kind: 'wake', event: policy.resolveWake(request) });
  const event = (request: EventRequest): HookOutcome => ({ kind: 'event', action: policy.resolveEvent(request) });
  const run = (request: AgentRequest): HookOutcome => {
    const resolved = policy.resolveAgentRun(request);
    if (request.wait === undefined) return { kind: 'agent', run: resolved };
    const timeoutMs = Math.min(resolved.timeoutSeconds, deps.maxWaitSeconds ?? 120) * 1000;
    return { kind: 'agent', run: resolved, wait: { timeoutMs, returnReply: request.wait.returnReply } };
  };
  switch (call.name) {
    case 'wake': {
      const payload = parseWakePayload(call.payload);
      return wake({ text: payload.text, mode: payload.mode, source: WAKE_SOURCE });
    }
    case 'agent':
      return run({ ...parseAgentPayload(call.payload), sessionKeyOrigin: 'request', source: AGENT_SOURCE });
    default: {
      const mapped = await buildMappedRequest(deps.mappings, deps.runTransform, call, deps.clock.now());
      switch (mapped.kind) {
        case 'wake':
          return wake(mapped.request);
        case 'agent':
          return run(mapped.request);
        case 'event':
          return event(mapped.request);
        case 'skip':
          return mapped.ignored === true ? { kind: 'skip', ignored: true } : { kind: 'skip' };
        case 'many':
          return {
            kind: 'many',
            items: mapped.items.map((i) => ({
              index: i.index,
              identity: i.identity,
              item: i.item,
              outcome: (i.action.kind === 'wake'
                ? wake(i.action.request)
                : i.action.kind === 'event'
                  ? event(i.action.request)
                  : run(i.action.request)) as ItemOutcome['outcome'],
            })),
          };
      }
    }
  }
}

type AgentOutcome = Extract<HookOutcome, { kind: 'agent' }>;

/** An `event` action's occurrence, recorded on its own. */
function eventsOf(outcome: HookOutcome): { published?: readonly NewLogEvent[] } {
  return outcome.kind === 'event' && outcome.published !== undefined ? { published: [outcome.published] } : {};
}

/** A run whose message joined a queued run about the same subject: that run answers for it. */
function joinRun<T extends AgentOutcome>(outcome: T, coalesced: Readonly<Record<string, string>>): T {
  const joined = coalesced[outcome.run.id];
  return joined === undefined ? outcome : { ...outcome, run: { ...outcome.run, id: joined }, coalesced: true };
}

function joinedItems(
  many: Extract<HookOutcome, { kind: 'many' }>,
  coalesced: Readonly<Record<string, string>>,
): typeof many.items {
  return many.items.map((i) => (i.outcome.kind === 'agent' ? { ...i, outcome: joinRun(i.outcome, coalesced) } : i));
}

/** The outcome as answered once the store said which of its runs joined queued runs. */
function joinedOutcome(outcome: HookOutcome, coalesced: Readonly<Record<string, string>>): HookOutcome {
  if (outcome.kind === 'many') return { ...outcome, items: joinedItems(outcome, coalesced) };
  return outcome.kind === 'agent' ? joinRun(outcome, coalesced) : outcome;
}

/**
 * Builds the action for `/wake`, `/agent` or a mapped name, applies policy, and records it: the
 * returned promise resolves only after the store has committed, so the caller may acknowledge.
 * A request carrying an idempotency key (or a sender's delivery id) is recorded with its answer in
 * one transaction; a repeat within `idempotencyWindowSeconds` gets that answer again and records
 * nothing, in this process or any replica sharing the store.
 */
export function createHookHandler(
  deps: HookActionDeps & {
    store: IngressStore;
    idempotencyWindowSeconds: number;
    /** Set when `mcp.enabled`: actions publish their occurrences. */
    publish?: PublishDeps;
  },
): HookHandler {
  const { store, publish } = deps;
  const publishesPayload = new Set(deps.mappings.filter((m) => m.mapping.publishPayload === true).map((m) => m.id));
  /** The outcome with its occurrences attached, when publishing is on; an `event` action needs it. */
  const published = (call: MappedHookCall, outcome: HookOutcome): HookOutcome => {
    if (publish === undefined) {
      const events =
        outcome.kind === 'event' || (outcome.kind === 'many' && outcome.items.some((i) => i.outcome.kind === 'event'));
      if (events)
        throw new RequestError('invalid_payload', {
          message: 'action "event" publishes to MCP subscribers, and mcp.enabled is false.',
          issues: [{ path: 'action', message: 'action "event" needs mcp.enabled' }],
        });
      return outcome;
    }
    return publishOutcome(
      publish.ids,
      {
        requestId: call.requestId ?? null,
        receivedAt: deps.clock.now(),
        payload: call.payload,
        withPayload: (source) => publishesPayload.has(source.hook),
      },
      outcome,
    );
  };
  /**
   * The first answer under `key`, or `null`. A client's own key that came with another body is
   * refused (422): answering it as the first would drop the new request without a word.
   */
  const duplicateOf = async (
    hook: string,
    key: string,
    fingerprint: string | null = null,
  ): Promise<HookOutcome | null> => {
    const first = await store.findIdempotencyKey(hook, key);
    if (first === null) return null;
    if (fingerprint !== null && first.fingerprint !== undefined && first.fingerprint !== fingerprint)
      throw new RequestError('idempotency_key_reused');
    return { kind: 'duplicate', status: first.status, body: first.body };
  };
  /** The key's record: the answer this outcome gets, and the one it gets if its runs join queued runs. */
  const record = (
    hook: string,
    key: string,
    outcome: HookOutcome,
    fingerprint: string | null = null,
  ): IdempotencyRecord => {
    const now = deps.clock.now();
    return {
      hook,
      key,
      ...describeOutcome(outcome),
      createdAt: now,
      expiresAt: now + deps.idempotencyWindowSeconds * 1000,
      ...(fingerprint === null ? {} : { fingerprint }),
      answerJoined: (coalesced) => describeOutcome(joinedOutcome(outcome, coalesced)).body,
    };
  };
  /**
   * All items in one transaction. Each item's identity is its own id (`idPath`), else the request's
   * key and its index; an item recorded by an earlier request is skipped and answered as a duplicate.
   */
  const recordMany = async (
    ingress: IngressStore,
    hook: string,
    key: string | null,
    fingerprint: string | null,
    many: Extract<HookOutcome, { kind: 'many' }>,
  ): Promise<HookOutcome> => {
    const itemKeys = many.items.map((i) => {
      const itemKey = i.identity ?? (key === null ? null : `${key}#${i.index}`);
      return itemKey === null ? null : boundKey(itemKey);
    });
    let skipped: number[];
    let coalesced: Record<string, string>;
    try {
      ({ skippedItems: skipped, coalesced } = await ingress.recordActions({
        events: [],
        runs: [],
        idempotency: key === null ? null : record(hook, key, many, fingerprint),
        items: many.items.map((i, n) => ({
          events: i.outcome.kind === 'wake' ? [i.outcome.event] : [],
          runs: i.outcome.kind === 'agent' ? [i.outcome.run] : [],
          ...eventsOf(i.outcome),
          idempotency: itemKeys[n] === null ? null : record(hook, itemKeys[n]!, i.outcome),
        })),
      }));
    } catch (error) {
      if (error instanceof DuplicateRequestError && key !== null)
        return (await duplicateOf(hook, key, fingerprint)) ?? many;
      throw error;
    }
    const items = await Promise.all(
      joinedItems(many, coalesced).map(async (i, n) => {
        if (!skipped.includes(n)) return i;
        const first = await store.findIdempotencyKey(hook, itemKeys[n]!);
        return { ...i, duplicateOf: first?.body ?? '{}' };
      }),
    );
    return { kind: 'many', items };
  };
  return async (call, ingress = store) => {
    // A replay is a new request: the key it carries is the one the original request recorded.
    const key = call.replay === true ? null : resolveIdempotencyKey(call);
    const fingerprint = key === null ? null : idempotencyFingerprint(call);
    if (key !== null) {
      const seen = await duplicateOf(call.name, key, fingerprint);
      if (seen !== null) return seen;
    }
    const outcome = published(call, await buildHookAction(deps, call));
    if (outcome.kind === 'many') return recordMany(ingress, call.name, key, fingerprint, outcome);
    if (outcome.kind !== 'wake' && outcome.kind !== 'agent' && outcome.kind !== 'event') return outcome;
    const coalescing = outcome.kind === 'agent' && outcome.run.coalesce !== undefined;
    if (key === null && !coalescing && outcome.kind !== 'event') {
      if (outcome.kind === 'wake') await ingress.addSystemEvent(outcome.event);
      else await ingress.enqueueRun(outcome.run);
      return outcome;
    }
    let coalesced: Record<string, string>;
    try {
      ({ coalesced } = await ingress.recordActions({
        events: outcome.kind === 'wake' ? [outcome.event] : [],
        runs: outcome.kind === 'agent' ? [outcome.run] : [],
        ...eventsOf(outcome),
        idempotency: key === null ? null : record(call.name, key, outcome, fingerprint),
      }));
    } catch (error) {
      // A repeat sent at the same moment lost the race to record the key.
      if (error instanceof DuplicateRequestError && key !== null)
        return (await duplicateOf(call.name, key, fingerprint)) ?? outcome;
      throw error;
    }
    return joinedOutcome(outcome, coalesced);
  };
}
