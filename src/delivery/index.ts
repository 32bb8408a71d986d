/** Delivery: the port replies are handed to, routing, the channel adapters and the worker that sends. */
export { toNewDelivery } from './delivery-port.js';
export type { DeliveryPort } from './delivery-port.js';
export { createChannelAdapters } from './create-channel-adapters.js';
export { DeliveryWorker } from './delivery-worker.js';
export type { DeliveryWorkerOptions } from './delivery-worker.js';
