import type { ThinkingLevel } from '../../config/index.js';
import {
  ProviderError,
  readUsage,
  type CompletionRequest,
  type ModelProvider,
  type ProviderOptions,
} from './model-provider.js';
import { postJson } from './post-json.js';

const OPENAI_DEFAULT_BASE_URL = 'https://api.openai.com/v1';

/** `thinking` → Chat Completions `reasoning_effort`; `off` sends nothing. */
const REASONING_EFFORT: Record<ThinkingLevel, string | undefined> = {
  off: undefined,
  minimal: 'minimal',
  low: 'low',
  medium: 'medium',
  high: 'high',
  xhigh: 'high',
};

interface ChatCompletion {
  model?: unknown;
  choices?: Array<{ message?: { content?: unknown; refusal?: unknown } }>;
  usage?: unknown;
}

/**
 * Any OpenAI-compatible Chat Completions endpoint (`POST {baseUrl}/chat/completions`): OpenAI,
 * Ollama, vLLM, LM Studio, OpenRouter.
 */
export function createOpenAiProvider(options: ProviderOptions): ModelProvider {
  const url = `${(options.baseUrl ?? OPENAI_DEFAULT_BASE_URL).replace(/\/+$/, '')}/chat/completions`;
  const headers: Record<string, string> = { ...options.headers };
  if (options.apiKey !== undefined && options.apiKey !== '') headers['authorization'] = `Bearer ${options.apiKey}`;
  return {
    async complete(req: CompletionRequest) {
      const body: Record<string, unknown> = {
        model: req.model,
        messages: [{ role: 'system', content: req.system }, ...req.messages],
      };
      const effort = req.thinking === null ? undefined : REASONING_EFFORT[req.thinking];
      if (effort !== undefined) body['reasoning_effort'] = effort;
      const res = (await postJson(url, body, {
        headers,
        signal: req.signal,
        provider: 'openai',
        now: options.now,
        connectTimeoutMs: options.connectTimeoutMs,
      })) as ChatCompletion;
      const message = res.choices?.[0]?.message;
      const content = message?.content;
      if (typeof content !== 'string') {
        const refusal = typeof message?.refusal === 'string' ? `: ${message.refusal}` : '';
        throw new ProviderError(`openai: response has no message content${refusal}`, { retryable: false });
      }
      const usage = readUsage(res.usage, 'prompt_tokens', 'completion_tokens');
      return {
        text: content,
        model: typeof res.model === 'string' ? res.model : req.model,
        ...(usage === undefined ? {} : { usage }),
      };
    },
  };
}
