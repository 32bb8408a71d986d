/** Runtime: executes recorded actions: agent runs through the claim loop, heartbeat turns per agent under their leases. */
export { createRuntime } from './create-runtime.js';
export { createRunFinished, createRunSummary } from './execute-run.js';
export type { Runtime, RuntimeInFlight, RuntimeOptions } from './create-runtime.js';
export { createDispatchWatch, type DispatchWatch, type DispatchWatchDeps } from './create-dispatch-watch.js';
export type { RuntimeDeps } from './runtime-deps.js';
export { createModelRegistry } from './create-model-registry.js';
export type { ModelRegistry } from './create-model-registry.js';
export { abortableSleep } from './providers/call-with-retry.js';
export { ECHO_LABEL } from './providers/create-echo-provider.js';
export { wrapExternalContent, neutralizeMarkers, looksLikeInjection } from './wrap-external-content.js';
export { isHeartbeatAck, HEARTBEAT_ACK } from './is-heartbeat-ack.js';
export { waitForRun, type RunWaitResult } from './wait-for-run.js';
