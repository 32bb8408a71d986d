/**
 * Catching up after downtime: a mapping's provider (GitHub's webhook deliveries, Stripe's events)
 * is asked what it sent while the gateway was away, and each missed event goes through the mapping
 * as a delivered request would, recognised by the provider's id.
 */
export {
  catchUpTargets,
  createCatchUp,
  type CatchUp,
  type CatchUpDeps,
  type ScheduledTarget,
} from './create-catch-up.js';
export { OVERLAP_MS, runCatchUpPass, type CatchUpReport, type CatchUpTarget } from './run-catch-up-pass.js';
export { CatchUpError, type CatchUpSource } from './catch-up-source.js';
