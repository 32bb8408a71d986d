import type { Config } from '../config/index.js';
import { BUILTIN_ECHO_PROVIDER, resolveModel } from '../policy/index.js';
import { isIdleHeartbeatPrompt } from './build-prompts.js';
import { createAnthropicProvider } from './providers/create-anthropic-provider.js';
import { createEchoProvider } from './providers/create-echo-provider.js';
import { createOpenAiProvider } from './providers/create-openai-provider.js';
import { ProviderError, type ModelProvider } from './providers/model-provider.js';

export interface ResolvedModel {
  /** `provider/model` after alias resolution. */
  ref: string;
  provider: ModelProvider;
  /** The provider's own model id. */
  modelId: string;
}

/** Looks up providers for model refs. */
export interface ModelRegistry {
  /** @throws ProviderError (not retryable) for an unknown provider or a refused model. */
  resolve(refOrAlias: string): ResolvedModel;
}

export function createModelRegistry(config: Config, now: () => number): ModelRegistry {
  const providers = new Map<string, ModelProvider>();
  const echo = createEchoProvider({ isIdleHeartbeat: isIdleHeartbeatPrompt });
  providers.set(BUILTIN_ECHO_PROVIDER, echo);
  for (const [id, p] of Object.entries(config.models.providers)) {
    const common = {
      now,
      ...(p.baseUrl === undefined ? {} : { baseUrl: p.baseUrl }),
      ...(p.apiKey === undefined ? {} : { apiKey: p.apiKey }),
      ...(p.headers === undefined ? {} : { headers: p.headers }),
    };
    providers.set(
      id,
      p.api === 'openai'
        ? createOpenAiProvider(common)
        : p.api === 'anthropic'
          ? createAnthropicProvider(common)
          : echo,
    );
  }
  return {
    resolve(refOrAlias) {
      const r = resolveModel(config, refOrAlias);
      if (!r.ok) throw new ProviderError(r.message, { retryable: false });
      const slash = r.ref.indexOf('/');
      const provider = providers.get(r.ref.slice(0, slash));
      if (provider === undefined) throw new ProviderError(`no provider for model "${r.ref}"`, { retryable: false });
      return { ref: r.ref, provider, modelId: r.ref.slice(slash + 1) };
    },
  };
}
