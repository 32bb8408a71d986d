import type { ThinkingLevel } from '../../config/index.js';
import {
  ProviderError,
  readUsage,
  type CompletionRequest,
  type ModelProvider,
  type ProviderOptions,
} from './model-provider.js';
import { postJson } from './post-json.js';

const ANTHROPIC_DEFAULT_BASE_URL = 'https://api.anthropic.com';
const ANTHROPIC_VERSION = '2023-06-01';

/** Answer budget when extended thinking is off. */
const MAX_TOKENS = 4096;

/** `thinking` → extended-thinking `budget_tokens` (the API's minimum is 1024); `off` disables it. */
const THINKING_BUDGET: Record<ThinkingLevel, number | undefined> = {
  off: undefined,
  minimal: 1024,
  low: 2048,
  medium: 8192,
  high: 16_384,
  xhigh: 32_000,
};

interface MessagesResponse {
  model?: unknown;
  content?: Array<{ type?: unknown; text?: unknown }>;
  usage?: unknown;
}

/** Anthropic Messages API (`POST {baseUrl}/v1/messages`, `x-api-key`, `anthropic-version`). */
export function createAnthropicProvider(options: ProviderOptions): ModelProvider {
  const url = `${(options.baseUrl ?? ANTHROPIC_DEFAULT_BASE_URL).replace(/\/+$/, '')}/v1/messages`;
  const headers: Record<string, string> = { 'anthropic-version': ANTHROPIC_VERSION, ...options.headers };
  if (options.apiKey !== undefined && options.apiKey !== '') headers['x-api-key'] = options.apiKey;
  return {
    async complete(req: CompletionRequest) {
      const budget = req.thinking === null ? undefined : THINKING_BUDGET[req.thinking];
      const body: Record<string, unknown> = {
        model: req.model,
        max_tokens: budget === undefined ? MAX_TOKENS : budget + MAX_TOKENS,
        system: req.system,
        messages: req.messages,
      };
      if (budget !== undefined) body['thinking'] = { type: 'enabled', budget_tokens: budget };
      const res = (await postJson(url, body, {
        headers,
        signal: req.signal,
        provider: 'anthropic',
        now: options.now,
        connectTimeoutMs: options.connectTimeoutMs,
      })) as MessagesResponse;
      const text = (res.content ?? [])
        .filter((b) => b.type === 'text' && typeof b.text === 'string')
        .map((b) => b.text as string)
        .join('');
      if (text === '') throw new ProviderError('anthropic: response has no text content', { retryable: false });
      const usage = readUsage(res.usage, 'input_tokens', 'output_tokens');
      return {
        text,
        model: typeof res.model === 'string' ? res.model : req.model,
        ...(usage === undefined ? {} : { usage }),
      };
    },
  };
}
