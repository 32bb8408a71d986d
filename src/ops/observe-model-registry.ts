import type { ModelRegistry } from '../runtime/index.js';
import type { GatewayMetrics } from './create-metrics.js';

/**
 * The same registry, whose providers count each call by provider id (`models.providers` key, or
 * `echo`), model and outcome, with the tokens the provider reported.
 */
export function observeModelRegistry(
  registry: ModelRegistry,
  metrics: Pick<GatewayMetrics, 'modelCall'>,
): ModelRegistry {
  return {
    resolve(refOrAlias) {
      const model = registry.resolve(refOrAlias);
      const provider = model.ref.slice(0, model.ref.indexOf('/'));
      return {
        ...model,
        provider: {
          async complete(request) {
            try {
              const result = await model.provider.complete(request);
              metrics.modelCall(provider, model.modelId, 'ok', result.usage);
              return result;
            } catch (error) {
              metrics.modelCall(provider, model.modelId, 'error', undefined);
              throw error;
            }
          },
        },
      };
    },
  };
}
