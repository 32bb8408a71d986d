/**
 * Catching up after downtime: a mapping's provider (GitHub's webhook deliveries, Stripe's events)
 * is asked what it sent while the gateway was away, and each missed event goes through the mapping
 * as a delivered request would, recognised by the provider's id.
 */
export {
  catchUpTargets,
  createCatchUp,
  type CatchUp,
} from './create-catch-up.js';
export type { CatchUpReport } from './run-catch-up-pass.js';
