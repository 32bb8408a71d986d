import { linkSignals } from '../common/link-signals.js';
import type { ThinkingLevel } from '../config/index.js';
import type { ResolvedModel } from './create-model-registry.js';
import { HISTORY_ENTRIES, fitHistory } from './fit-history.js';
import { callWithRetry } from './providers/call-with-retry.js';
import type { TokenUsage } from './providers/model-provider.js';
import { readSystemPrompt, type AgentProfile } from './resolve-agent-profile.js';
import type { RuntimeDeps } from './runtime-deps.js';

/** The turn ran out of its time (retries included). */
export class TurnTimeoutError extends Error {
  /** The message of the last failed try that was retried, if one was: why the time ran out. */
  readonly lastFailure: string | undefined;
  constructor(timeoutMs: number, options?: { cause?: unknown; lastFailure?: string | undefined }) {
    super(
      `timed out after ${timeoutMs} ms${options?.lastFailure === undefined ? '' : ` (last failure: ${options.lastFailure})`}`,
      options,
    );
    this.name = 'TurnTimeoutError';
    this.lastFailure = options?.lastFailure;
  }
}

/**
 * The session's history could not be read: the store failed, not the turn, and the model was not
 * called. The run is worth trying again as it is.
 */
export class HistoryUnreadableError extends Error {
  constructor(cause: unknown) {
    super(`the session history could not be read: ${(cause as Error)?.message ?? String(cause)}`, { cause });
    this.name = 'HistoryUnreadableError';
  }
}

interface ModelTurn {
  profile: AgentProfile;
  model: ResolvedModel;
  /** The session whose recent transcript is the conversation history. */
  sessionKey: string;
  /** The new user message. */
  content: string;
  thinking: ThinkingLevel | null;
  timeoutMs: number;
  /** Aborts the call when the gateway stops. */
  shutdown: AbortSignal;
}

/**
 * One model call in a session: the agent's system prompt, the session's recent history (bounded
 * in entries and characters) and the new message, retried while `timeoutMs` allows.
 * Resolves with the reply and the tokens the provider reported (when it did).
 * @throws TurnTimeoutError when the time runs out; the provider's error otherwise.
 */
export async function callModelTurn(
  deps: Pick<RuntimeDeps, 'store' | 'clock' | 'retry' | 'log'>,
  turn: ModelTurn,
): Promise<{ text: string; usage?: TokenUsage }> {
  const started = deps.clock.now();
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(
    () => {
      timedOut = true;
      controller.abort(new TurnTimeoutError(turn.timeoutMs));
    },
    Math.max(0, turn.timeoutMs),
  );
  const linked = linkSignals([controller.signal, turn.shutdown]);
  let lastFailure: string | undefined;
  try {
    const history = await deps.store
      .readTranscript(turn.sessionKey, { limit: HISTORY_ENTRIES })
      .catch((error: unknown) => {
        throw new HistoryUnreadableError(error);
      });
    const result = await callWithRetry(
      turn.model.provider,
      {
        model: turn.model.modelId,
        system: await readSystemPrompt(turn.profile),
        messages: [...fitHistory(history), { role: 'user', content: turn.content }],
        thinking: turn.thinking,
        signal: linked.signal,
      },
      started + turn.timeoutMs,
      { ...deps.retry, log: deps.log, onRetried: (e) => (lastFailure = e.message) },
    );
    return result.usage === undefined ? { text: result.text } : { text: result.text, usage: result.usage };
  } catch (error) {
    if (timedOut) throw new TurnTimeoutError(turn.timeoutMs, { cause: error, lastFailure });
    throw error;
  } finally {
    clearTimeout(timer);
    linked.dispose();
  }
}
