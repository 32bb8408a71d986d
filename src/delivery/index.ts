/** Delivery: the port replies are handed to, routing, the channel adapters and the worker that sends. */
export { toNewDelivery } from './delivery-port.js';
export type { DeliveryPort, DeliveryRequest } from './delivery-port.js';
export { DeliveryError } from './channel-adapter.js';
export type { ChannelAdapter } from './channel-adapter.js';
export { createChannelAdapters } from './create-channel-adapters.js';
export { DeliveryWorker } from './delivery-worker.js';
export type { DeliveryWorkerOptions } from './delivery-worker.js';
export { configuredChannels, resolveRoute } from './resolve-route.js';
export { splitMessage } from './split-message.js';
