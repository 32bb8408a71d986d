/** Durable state: the store's roles, its record types, and the factory for its implementations. */
export type {
  CatchUpState,
  DeliveryQueue,
  EventLog,
  DispatchControl,
  HeartbeatQueue,
  IngressStore,
  LockoutStore,
  RequestLog,
  RetentionStore,
  RunControl,
  RunQueue,
  Store,
  StoreReader,
  StoreStats,
  SubscriptionStore,
  WorkSignals,
} from './store.js';
export { TooManySubscriptionsError, viewSubscription } from './log-rows.js';
export { RUN_STATES } from './store-stats.js';
export type { CommitObservation, QueueStats, RunCounts, StoreObserver, StoreSize } from './store-stats.js';
export type * from './types.js';
export type * from './event-log-types.js';
export type * from './maintenance-types.js';
export type * from './request-record.js';
export type * from './relay-queue.js';
export { createStore, type CreateStoreOptions, type StoreMode } from './create-store.js';
export { StoreLockedError, StoreMissingError } from './sqlite/lock-database.js';
export { StoreOpenError } from './store-open-error.js';
export { DuplicateRequestError } from './duplicate-request-error.js';
export { isStoreUnavailable } from './is-store-unavailable.js';
export { createPruner, pruneCutoffs, type PruneObserver, type Pruner } from './create-pruner.js';
export {
  ALL_KEY,
  coveringHold,
  HOLD_SCOPES,
  holdReason,
  resolveHoldSelection,
  type HoldSelection,
} from './dispatch-holds.js';
export type { BudgetReport, BudgetUsage, RunBudget, RunBudgets } from './run-budgets.js';
