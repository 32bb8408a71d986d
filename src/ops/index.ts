/** Operating the gateway: Prometheus metrics, the observers that feed them, and readiness. */
export { createMetrics } from './create-metrics.js';
export { createPullMetrics, createRelayMetrics } from './create-relay-metrics.js';
export { createHookLabeler } from './create-hook-labeler.js';
export { observeAuthLimiter } from './observe-auth-limiter.js';
export { observeModelRegistry } from './observe-model-registry.js';
export { observeStore } from './observe-store.js';
export { createReadiness, type ReadinessDeps } from './create-readiness.js';
