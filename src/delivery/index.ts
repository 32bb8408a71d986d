/** Delivery: the port replies are handed to, and the record each request becomes. */
export { createPendingDeliveryPort, toNewDelivery } from './delivery-port.js';
export type { DeliveryPort, DeliveryRequest } from './delivery-port.js';
