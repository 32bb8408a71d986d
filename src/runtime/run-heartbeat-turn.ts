import { toNewDelivery } from '../delivery/index.js';
import { mainSessionKey } from '../policy/index.js';
import {
  DEFAULT_HEARTBEAT_PROMPT,
  HEARTBEAT_MAX_EVENTS,
  buildHeartbeatPrompt,
  takeHeartbeatEvents,
} from './build-prompts.js';
import { buildDigestPrompt, DIGEST_GROUPS, DIGEST_HIGH, DIGEST_HOOKS, DIGEST_NEWEST } from './build-digest-prompt.js';
import { isHeartbeatAck } from './is-heartbeat-ack.js';
import { callModelTurn } from './call-model-turn.js';
import { resolveAgentProfile } from './resolve-agent-profile.js';
import type { RuntimeDeps } from './runtime-deps.js';
import { createBoundaryId, looksLikeInjection } from './wrap-external-content.js';

/**
 * What a turn did: nothing (`none`: nothing pending, or not recorded), listed the pending events,
 * took a digest of the whole backlog, or took a digest that left kinds (or high-priority events)
 * pending for the next turn.
 */
type HeartbeatTurnOutcome = 'none' | 'listed' | 'digest' | 'kept';

export interface HeartbeatLease {
  claimId: string;
  /** Aborts when the lease was lost (or at shutdown). */
  signal: AbortSignal;
}

/**
 * One heartbeat turn of an agent's main session, run under the agent's heartbeat lease: drain
 * pending events into a prompt, run the model, then record the turn, mark the events consumed and
 * (unless the reply is only an ack, or the turn saw only summaries of runs whose replies went to
 * a chat) request delivery to the last route, all in one transaction
 * that is refused if the lease was lost or any event was consumed meanwhile. A failure leaves the
 * events pending for the next turn. A requested turn with nothing pending does nothing. A backlog
 * larger than one prompt holds becomes a bounded digest, and the turn consumes what it showed (all
 * of it, unless the backlog held more kinds or high-priority events than one digest shows), so a
 * flood costs a model turn per digest, never one per fifty events. After a digest the scheduler
 * makes requests wait before the next turn.
 */
export async function runHeartbeatTurn(
  deps: RuntimeDeps,
  agentId: string,
  trigger: 'request' | 'periodic',
  lease: HeartbeatLease,
): Promise<HeartbeatTurnOutcome> {
  const { store, config, clock, log } = deps;
  const shutdown = lease.signal;
  const sessionKey = mainSessionKey(agentId);
  const pending = await store.listPendingEvents(sessionKey, { limit: HEARTBEAT_MAX_EVENTS + 1 });
  if (pending.length === 0 && trigger === 'request') return 'none';
  const listed = takeHeartbeatEvents(pending);
  // More than one turn holds: a digest of the backlog instead, consumed in this one turn as far as
  // it shows it (kinds not shown, and high-priority events that did not fit, stay pending).
  const digest =
    listed.length < pending.length
      ? await store.digestPending(sessionKey, {
          groups: DIGEST_GROUPS,
          hooks: DIGEST_HOOKS,
          newest: DIGEST_NEWEST,
          high: DIGEST_HIGH,
        })
      : null;
  const high = digest === null ? [] : takeHeartbeatEvents(digest.high);
  const events = digest === null ? listed : [...high, ...digest.groups.map((g) => g.sample), ...digest.newest];
  const complete = digest !== null && digest.groups.length === digest.kinds && high.length === digest.highTotal;
  const profile = resolveAgentProfile(config, agentId, deps.configDir);
  const heartbeat = config.agents.defaults.heartbeat;
  const now = clock.now();
  const options = { prompt: heartbeat.prompt ?? DEFAULT_HEARTBEAT_PROMPT, now, boundaryId: createBoundaryId() };
  const prompt = digest === null ? buildHeartbeatPrompt(events, options) : buildDigestPrompt(digest, high, options);
  if (events.some((e) => e.source.external && looksLikeInjection(e.text))) {
    log.warn('hook content in a heartbeat looks like a prompt-injection attempt', { agentId, events: events.length });
  }
  const { text: reply, usage } = await callModelTurn(deps, {
    profile,
    model: deps.models.resolve(profile.model),
    sessionKey,
    content: prompt,
    thinking: config.agents.defaults.thinking ?? null,
    timeoutMs: config.agents.defaults.timeoutSeconds * 1000,
    shutdown,
  });
  const turnId = deps.ids.next();
  const at = clock.now();
  const ack = isHeartbeatAck(reply, heartbeat.ackMaxChars);
  // One hook, one chat message: a turn that saw only summaries of runs whose replies already went
  // to a chat has no news of its own, and its reply (which restates them) stays in the transcript.
  const news = digest !== null || events.some((e) => e.source.delivered !== true);
  const delivery =
    ack || !news ? null : toNewDelivery({ agentId, channel: 'last', to: null, text: reply }, deps.ids.next(), at);
  const recorded = await store.recordHeartbeatTurn({
    claimId: lease.claimId,
    sessionKey,
    agentId,
    // A digest that showed every kind and high-priority event consumes the backlog whole; one that
    // did not consumes the kinds it showed and the events it listed, and nothing else.
    consumedEventIds:
      digest === null
        ? events.map((e) => e.id)
        : complete
          ? []
          : [...new Set([...high, ...digest.newest].map((e) => e.id))],
    consumeThrough:
      digest === null
        ? null
        : {
            eventId: digest.throughId,
            count: digest.total,
            ...(complete ? {} : { kinds: digest.groups.map((g) => g.kind) }),
          },
    transcript: [
      { sessionKey, role: 'user', content: prompt, turnId, createdAt: now },
      { sessionKey, role: 'assistant', content: reply, turnId, createdAt: at },
    ],
    delivery,
    at,
    tokens: usage === undefined ? null : usage.inputTokens + usage.outputTokens,
  });
  if (!recorded) {
    log.warn('heartbeat turn discarded: its lease was lost or its events were consumed by another turn', {
      agentId,
      turnId,
    });
    return 'none';
  }
  log.info('heartbeat turn recorded', {
    agentId,
    turnId,
    events: digest?.total ?? events.length,
    digest: digest !== null,
    ...(digest === null || complete
      ? {}
      : { keptKinds: digest.kinds - digest.groups.length, keptHigh: digest.highTotal - high.length }),
    ack,
  });
  if (delivery !== null) deps.delivery.deliver(delivery);
  // What arrived since is announced by its own signals; what the digest kept is the caller's to ask for.
  return digest === null ? 'listed' : complete ? 'digest' : 'kept';
}
