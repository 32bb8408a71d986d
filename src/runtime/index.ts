/** Runtime: executes recorded actions: agent runs through the claim loop, heartbeat turns per agent under their leases. */
export { createRuntime } from './create-runtime.js';
export { createRunFinished, createRunSummary } from './execute-run.js';
export type { Runtime, RuntimeOptions } from './create-runtime.js';
export { createDispatchWatch, type DispatchWatch } from './create-dispatch-watch.js';
export { createModelRegistry } from './create-model-registry.js';
export type { ModelRegistry } from './create-model-registry.js';
export { abortableSleep } from './providers/call-with-retry.js';
export { waitForRun, type RunWaitResult } from './wait-for-run.js';
