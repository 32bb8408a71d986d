import type { CompletionRequest, ModelProvider } from './model-provider.js';

/** Label every echo reply carries, so nobody mistakes it for a real model. */
const ECHO_LABEL = '[offline echo model]';

const REPLY_CHARS = 280;
/** The content inside an untrusted-content boundary, so the echo repeats the hook's words, not the notice. */
const BOUNDED = /<<<EXTERNAL_UNTRUSTED_CONTENT id="[^"]*">>>\n([\s\S]*?)\n<<<END_EXTERNAL_UNTRUSTED_CONTENT/;

/**
 * The built-in offline model: no network, a deterministic reply derived from the prompt. A
 * heartbeat prompt that lists no events gets `HEARTBEAT_OK`, as a real agent would answer;
 * anything else is echoed back, labelled, in short.
 */
export function createEchoProvider(options: { isIdleHeartbeat: (prompt: string) => boolean }): ModelProvider {
  return {
    async complete(req: CompletionRequest) {
      req.signal.throwIfAborted();
      const last = [...req.messages].reverse().find((m) => m.role === 'user')?.content ?? '';
      if (options.isIdleHeartbeat(last)) return { text: 'HEARTBEAT_OK', model: `echo/${req.model}` };
      const flat = (BOUNDED.exec(last)?.[1] ?? last).replace(/\s+/g, ' ').trim();
      const clipped = flat.length > REPLY_CHARS ? `${flat.slice(0, REPLY_CHARS - 1)}…` : flat;
      return {
        text: `${ECHO_LABEL} Received ${last.length} characters (turn ${req.messages.length}). It said: ${clipped}`,
        model: `echo/${req.model}`,
      };
    },
  };
}
