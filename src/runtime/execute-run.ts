import { retryWhile } from '../common/retry-while.js';
import { keepText } from '../common/scrub-secrets.js';
import { toNewDelivery } from '../delivery/index.js';
import { mainSessionKey } from '../policy/index.js';
import { isUntrusted, RUN_FINISHED } from '../common/published-events.js';
import {
  isStoreUnavailable,
  type ClaimedRun,
  type NewLogEvent,
  type NewSystemEvent,
  type RunCompletion,
  type RunOutcomeState,
  type RunRecord,
} from '../store/index.js';
import { buildRunMessage, buildRunSummary } from './build-prompts.js';
import { isHeartbeatAck } from './is-heartbeat-ack.js';
import { callModelTurn, HistoryUnreadableError, TurnTimeoutError } from './call-model-turn.js';
import { classifyRunError, type RunErrorCategory } from './classify-run-error.js';
import { resolveAgentProfile } from './resolve-agent-profile.js';
import type { RuntimeDeps } from './runtime-deps.js';
import { createBoundaryId, looksLikeInjection } from './wrap-external-content.js';

/** The summary event a finished (or abandoned) run posts to its agent's main session. */
export function createRunSummary(
  deps: Pick<RuntimeDeps, 'ids'>,
  run: RunRecord,
  state: RunOutcomeState,
  text: string,
  at: number,
  /** The run's reply goes to a chat (a delivery was requested with the summary). */
  delivered = false,
): NewSystemEvent {
  return {
    id: deps.ids.next(),
    agentId: run.agentId,
    sessionKey: mainSessionKey(run.agentId),
    text: buildRunSummary(run.name, state, text),
    mode: run.wakeMode,
    // The summary carries model output shaped by hook content: it stays external content, its
    // `Hook <name>:` head the gateway's own.
    source: { ...run.source, summary: true, ...(delivered ? { delivered: true as const } : {}) },
    createdAt: at,
  };
}

/**
 * A run's `run.finished` occurrence: its state and reply (or error), written with its end. The reply
 * is model output shaped by the hook's content, so it is as trusted as that content was.
 */
export function createRunFinished(
  deps: Pick<RuntimeDeps, 'ids'>,
  run: RunRecord,
  end: { state: RunOutcomeState; reply: string | null; error: string | null; at: number },
): NewLogEvent {
  const untrusted = isUntrusted(run.source);
  return {
    id: deps.ids.next(),
    name: RUN_FINISHED,
    agentId: run.agentId,
    requestId: null,
    createdAt: end.at,
    data: {
      runId: run.id,
      hook: run.source.hook,
      name: run.name,
      agentId: run.agentId,
      sessionKey: run.sessionKey,
      state: end.state,
      reply: end.reply,
      error: end.error,
      finishedAt: new Date(end.at).toISOString(),
      untrusted,
    },
    untrusted,
  };
}

interface RunResult {
  state: RunOutcomeState;
  /** False when nothing was written: the claim went stale, or the run was handed back (shutdown, the store failing). */
  recorded: boolean;
}

/**
 * Executes one claimed run: model call bounded by `timeoutSeconds` (retries included), then the
 * outcome, transcript, summary and delivery request in one transaction under the run's claim.
 * `shutdown` aborts at shutdown or when the claim was lost; `finishing` is called once that
 * transaction is handed to the store (see `ClaimLoopOptions.execute`).
 */
export async function executeRun(
  deps: RuntimeDeps,
  run: ClaimedRun,
  shutdown: AbortSignal,
  finishing?: () => void,
): Promise<RunResult> {
  const { config, clock, log } = deps;
  const started = clock.now();
  const profile = resolveAgentProfile(config, run.agentId, deps.configDir);
  const content = buildRunMessage(run.message, {
    hook: run.source.hook,
    name: run.name,
    source: run.source,
    boundaryId: createBoundaryId(),
  });
  if (run.source.external && looksLikeInjection(run.message)) {
    log.warn('hook content looks like a prompt-injection attempt', { runId: run.id, hook: run.source.hook });
  }
  let state: RunOutcomeState;
  let reply: string | null = null;
  let error: string | null = null;
  let modelUsed: string | null = null;
  let tokens: number | null = null;
  let category: RunErrorCategory | null = null;
  try {
    const model = deps.models.resolve(run.model ?? profile.model);
    modelUsed = model.ref;
    const turn = await callModelTurn(deps, {
      profile,
      model,
      sessionKey: run.sessionKey,
      content,
      thinking: run.thinking ?? config.agents.defaults.thinking ?? null,
      timeoutMs: run.timeoutSeconds * 1000,
      shutdown,
    });
    reply = turn.text;
    if (turn.usage !== undefined) tokens = turn.usage.inputTokens + turn.usage.outputTokens;
    state = 'succeeded';
  } catch (err) {
    if (err instanceof HistoryUnreadableError) {
      // The store failed (a database connection lost, say), not the run: it goes back to the queue
      // as it was, instead of failing for a cause of the gateway's. Should the hand-back fail too,
      // the lease runs out and the run is requeued all the same.
      if (await deps.store.releaseRun(run)) log.warn('run handed back', { runId: run.id, reason: err.message });
      return { state: 'failed', recorded: false };
    }
    state = err instanceof TurnTimeoutError ? 'timed_out' : 'failed';
    category = classifyRunError(err);
    const scrub = deps.scrub ?? keepText;
    const last =
      err instanceof TurnTimeoutError && err.lastFailure !== undefined
        ? ` (last failure: ${scrub(err.lastFailure)})`
        : '';
    error = state === 'timed_out' ? `timed out after ${run.timeoutSeconds} s${last}` : scrub((err as Error).message);
  }
  if (shutdown.aborted && state !== 'succeeded') {
    // Interrupted by shutdown, not by the run itself: hand it back for the next start.
    if (await deps.store.releaseRun(run))
      log.info('run handed back', { runId: run.id, reason: String(shutdown.reason) });
    return { state, recorded: false };
  }
  return finishRun(deps, run, { state, reply, error, category, modelUsed, tokens, content, started }, finishing);
}

/** Records a run's outcome under its claim: the run, its transcript, summary and delivery, in one transaction. */
export async function finishRun(
  deps: RuntimeDeps,
  run: ClaimedRun,
  outcome: {
    state: RunOutcomeState;
    reply: string | null;
    error: string | null;
    category: RunErrorCategory | null;
    modelUsed: string | null;
    /** Tokens the provider reported for the run, counted against `tokensPerDay` budgets. */
    tokens?: number | null;
    content: string;
    started: number;
  },
  /** Called once the outcome's write is handed to the store, before it commits. */
  finishing?: () => void,
): Promise<RunResult> {
  const { clock, log } = deps;
  const { state, reply, error, category, modelUsed, tokens, content, started } = outcome;
  const at = clock.now();
  // A run's reply is held back only when it is the acknowledgement alone: `heartbeat.ackMaxChars`
  // (the text a heartbeat turn's acknowledgement may carry) is the heartbeat's, and a run's answer
  // that mentions HEARTBEAT_OK beside real text is delivered.
  const deliver = state === 'succeeded' && run.deliver && reply !== null && !isHeartbeatAck(reply, 0);
  const delivery = deliver
    ? toNewDelivery(
        { agentId: run.agentId, channel: run.channel, to: run.to, text: reply!, runId: run.id },
        deps.ids.next(),
        at,
      )
    : null;
  const outcomeRecord: RunCompletion = {
    runId: run.id,
    claimId: run.claimId,
    state,
    finishedAt: at,
    model: modelUsed,
    reply,
    error,
    tokens: tokens ?? null,
    transcript:
      reply === null
        ? []
        : [
            { sessionKey: run.sessionKey, role: 'user', content, turnId: run.id, createdAt: started },
            { sessionKey: run.sessionKey, role: 'assistant', content: reply, turnId: run.id, createdAt: at },
          ],
    summary: createRunSummary(deps, run, state, reply ?? error ?? '', at, delivery !== null),
    delivery,
    ...(deps.publishRuns === true ? { published: createRunFinished(deps, run, { state, reply, error, at }) } : {}),
  };
  // The outcome was paid for: a store that cannot write for a moment is waited for, not left to run
  // the model again once the lease runs out (a claim that is no longer current is refused all the same).
  const completing = retryWhile(() => deps.store.completeRun(outcomeRecord), {
    clock,
    retryable: isStoreUnavailable,
    forMs: deps.config.store.leaseSeconds * 1000,
  });
  // The first try is handed to the store by now (retryWhile calls it at once).
  finishing?.();
  const recorded = await completing;
  if (!recorded) {
    log.warn('run finished on a stale claim; outcome discarded', { runId: run.id });
    return { state, recorded };
  }
  if (state === 'succeeded')
    log.info('run finished', { runId: run.id, state, model: modelUsed, tokens, ms: at - started });
  else
    log.warn('run failed', {
      runId: run.id,
      hook: run.source.hook,
      state,
      category,
      error,
      model: modelUsed,
      ms: at - started,
    });
  if (delivery !== null) deps.delivery.deliver(delivery);
  return { state, recorded };
}
