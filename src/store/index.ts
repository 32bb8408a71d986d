/** Durable state: the store's roles, its record types, and the factory for its implementations. */
export type {
  CatchUpState,
  DeliveryQueue,
  EventLog,
  DispatchControl,
  IngressStore,
  LockoutStore,
  RequestLog,
  RunControl,
  Store,
  StoreReader,
  SubscriptionStore,
  WorkSignals,
} from './store.js';
export { TooManySubscriptionsError, viewSubscription } from './log-rows.js';
export { RUN_STATES } from './store-stats.js';
export type { QueueStats, RunCounts, StoreObserver, StoreSize } from './store-stats.js';
export type * from './types.js';
export type * from './event-log-types.js';
export type * from './maintenance-types.js';
export type * from './request-record.js';
export type * from './relay-queue.js';
export { createStore, type StoreMode } from './create-store.js';
export { StoreLockedError, StoreMissingError } from './sqlite/lock-database.js';
export { StoreOpenError } from './store-open-error.js';
export { DuplicateRequestError } from './duplicate-request-error.js';
export { isStoreUnavailable } from './is-store-unavailable.js';
export { createPruner, pruneCutoffs, type PruneObserver } from './create-pruner.js';
export {
  ALL_KEY,
  coveringHold,
  resolveHoldSelection,
  type HoldSelection,
} from './dispatch-holds.js';
export type { BudgetReport, RunBudget, RunBudgets } from './run-budgets.js';
