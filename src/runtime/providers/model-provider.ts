import { HookgateError } from '../../common/errors.js';
import type { ThinkingLevel } from '../../config/index.js';
import type { NetworkFailure } from './classify-network-error.js';

export interface ChatMessage {
  role: 'user' | 'assistant';
  content: string;
}

/** One model call. `model` is the provider's own model id (the part after `<provider>/`). */
export interface CompletionRequest {
  model: string;
  system: string;
  messages: readonly ChatMessage[];
  thinking: ThinkingLevel | null;
  signal: AbortSignal;
}

export interface CompletionResult {
  text: string;
  /** The model the provider says answered. */
  model: string;
  /** Tokens the provider says the call used, when it says. */
  usage?: TokenUsage;
}

export interface TokenUsage {
  inputTokens: number;
  outputTokens: number;
}

/** Reads two token counts from a response's `usage` object; `undefined` unless both are numbers. */
export function readUsage(usage: unknown, input: string, output: string): TokenUsage | undefined {
  if (usage === null || typeof usage !== 'object') return undefined;
  const i = (usage as Record<string, unknown>)[input];
  const o = (usage as Record<string, unknown>)[output];
  return typeof i === 'number' && typeof o === 'number' && i >= 0 && o >= 0
    ? { inputTokens: i, outputTokens: o }
    : undefined;
}

/** How a provider is reached: `models.providers.<id>` minus `api`, plus the clock. */
export interface ProviderOptions {
  baseUrl?: string;
  apiKey?: string;
  headers?: Record<string, string>;
  now: () => number;
  /** How long each try may take to connect, TLS handshake included. @default 10000 */
  connectTimeoutMs?: number;
}

/** A model API. Implementations throw `ProviderError` for failures the caller can classify. */
export interface ModelProvider {
  complete(request: CompletionRequest): Promise<CompletionResult>;
}

/**
 * A failure reported by (or on the way to) a model API. `retryable` for transient failures (429,
 * 5xx, timeouts, resets, and refused or unresolved hosts for a few quick tries); `retryAfterMs`
 * carries the server's hint when it gave one; `network` says what failed before any HTTP answer.
 */
export class ProviderError extends HookgateError {
  readonly status: number | undefined;
  readonly retryable: boolean;
  readonly retryAfterMs: number | undefined;
  readonly network: NetworkFailure | undefined;
  constructor(
    message: string,
    options: { status?: number; retryable: boolean; retryAfterMs?: number; network?: NetworkFailure; cause?: unknown },
  ) {
    super('provider_error', message, { cause: options.cause });
    this.name = 'ProviderError';
    this.status = options.status;
    this.retryable = options.retryable;
    this.retryAfterMs = options.retryAfterMs;
    this.network = options.network;
  }
}
